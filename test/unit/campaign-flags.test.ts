/** The `campaign start` / `schedule create|update` flags become campaign input fields: only those given. */
import { describe, expect, it } from 'vitest';
import { campaignFieldsFrom } from '../../src/cli/campaign.js';

describe('campaignFieldsFrom', () => {
  it('sets the field each given flag names, and no other', () => {
    expect(campaignFieldsFrom({})).toEqual({});
    expect(campaignFieldsFrom({ preflight: true })).toEqual({});
    expect(
      campaignFieldsFrom({ sender: 'ACME', waitWindow: 60_000, maxCost: 500, maxOutstanding: 2000, preflight: false }),
    ).toEqual({ sender: 'ACME', waitWindowMs: 60_000, maxCost: 500, maxOutstanding: 2000, preflight: false });
  });

  it('refuses window details without --window', () => {
    expect(() => campaignFieldsFrom({ windowDays: 'mon' })).toThrow(/need --window/);
  });
});
