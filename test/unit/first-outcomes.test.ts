/** The first-final-wins rule of sendSms and awaitMessage (workflows/first-outcomes.ts), without a workflow. */
import { describe, expect, it } from 'vitest';
import type { MessageOutcome } from '../../src/definitions/message-outcomes.js';
import { FirstOutcomes } from '../../workflows/first-outcomes.js';

const outcome = (providerMessageId: string, status: MessageOutcome['status']): MessageOutcome => ({
  providerMessageId,
  status,
  timestamp: '2026-01-01T00:00:00Z',
  source: 'webhook',
});

describe('FirstOutcomes', () => {
  it('keeps the first final outcome of a message and ignores a later conflicting one', () => {
    const outcomes = new FirstOutcomes();
    expect(outcomes.keep([outcome('m1', 'delivered')])).toEqual([outcome('m1', 'delivered')]);
    expect(outcomes.keep([outcome('m1', 'failed')])).toEqual([]);
    expect(outcomes.get('m1')?.status).toBe('delivered');
  });

  it('keeps the first of conflicting outcomes within one list', () => {
    const outcomes = new FirstOutcomes();
    const kept = outcomes.keep([outcome('m1', 'failed'), outcome('m2', 'delivered'), outcome('m1', 'delivered')]);
    expect(kept).toEqual([outcome('m1', 'failed'), outcome('m2', 'delivered')]);
    expect(outcomes.get('m1')?.status).toBe('failed');
  });

  it('lists the messages still open, in the order asked', () => {
    const outcomes = new FirstOutcomes();
    expect(outcomes.open(['m1', 'm2', 'm3'])).toEqual(['m1', 'm2', 'm3']);
    outcomes.keep([outcome('m2', 'delivered')]);
    expect(outcomes.open(['m3', 'm2', 'm1'])).toEqual(['m3', 'm1']);
    expect(outcomes.get('m3')).toBeUndefined();
  });
});
