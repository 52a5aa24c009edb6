/** The campaign contract: which listed numbers become recipients, and what a campaign input may be. */
import { describe, expect, it } from 'vitest';
import { CampaignInput, CampaignScheduleInput, normalizeRecipient, SendWindow } from '../../src/api/campaign-io.js';
import { compileTiming, mergeTiming } from '../../src/starter/schedules.js';

describe('normalizeRecipient', () => {
  it('accepts international numbers written the usual ways', () => {
    for (const written of [
      '2348012345678',
      '+2348012345678',
      '+234 801 234 5678',
      '00234-801-234-5678',
      '+1 (202) 555-0100',
    ]) {
      expect(normalizeRecipient(written)).toMatchObject({ ok: true });
    }
    expect(normalizeRecipient('+234 801 234 5678')).toEqual({ ok: true, digits: '2348012345678' });
  });

  it('refuses what it cannot read, with the reason', () => {
    expect(normalizeRecipient('call me')).toEqual({ ok: false, reason: 'unknown number format' });
    expect(normalizeRecipient('12')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('unknown number format'),
    });
    expect(normalizeRecipient('08012345678')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('unknown number format'),
    });
    expect(normalizeRecipient('1999999999999')).toEqual({ ok: false, reason: 'not a valid phone number' });
  });

  it('reads a local number in the default country only', () => {
    expect(normalizeRecipient('08012345678', 'NG')).toEqual({ ok: true, digits: '2348012345678' });
    expect(normalizeRecipient('(0801) 234-5678', 'NG')).toEqual({ ok: true, digits: '2348012345678' });
    // International numbers stay what they are, whatever the country.
    expect(normalizeRecipient('+1 202 555 0100', 'NG')).toEqual({ ok: true, digits: '12025550100' });
    expect(normalizeRecipient('08012345678')).toEqual({
      ok: false,
      reason:
        "unknown number format: a local number needs the campaign's default country (defaultCountry, --default-country NG), or write it international, e.g. +2348012345678",
    });
    expect(normalizeRecipient('0801', 'NG')).toEqual({
      ok: false,
      reason: 'not a valid phone number (international, or local in NG)',
    });
  });
});

describe('CampaignInput', () => {
  const base = {
    sender: 'ACME',
    message: 'Your payment is due',
    audience: { type: 'inline', recipients: ['2348012345678'] },
  };

  it('takes inline, file, url and loader audiences', () => {
    expect(CampaignInput.safeParse(base).success).toBe(true);
    expect(
      CampaignInput.safeParse({ ...base, audience: { type: 'file', path: '/data/due.csv', column: 'phone' } }).success,
    ).toBe(true);
    expect(
      CampaignInput.safeParse({ ...base, audience: { type: 'url', url: 'https://example.com/due.ndjson' } }).success,
    ).toBe(true);
    expect(
      CampaignInput.safeParse({ ...base, audience: { type: 'loader', name: 'dueCustomers', params: { days: 3 } } })
        .success,
    ).toBe(true);
  });

  it('names what is wrong', () => {
    const issues = (input: unknown) => CampaignInput.safeParse(input).error?.issues.map((i) => i.path.join('.'));
    expect(issues({ ...base, sender: '' })).toContain('sender');
    expect(issues({ ...base, audience: { type: 'file', path: 'relative.csv' } })).toContain('audience.path');
    expect(issues({ ...base, chunkSize: 1001 })).toContain('chunkSize');
    expect(issues({ ...base, chunkSize: 500, maxOutstanding: 100 })).toContain('maxOutstanding');
    expect(issues({ ...base, maxOutstanding: 10_001 })).toContain('maxOutstanding');
    expect(issues({ ...base, sendWindow: { start: '09:00', end: '18:00', timeZone: 'Mars/Olympus' } })).toContain(
      'sendWindow.timeZone',
    );
  });

  it('takes a default country for local numbers, and a CSV delimiter, refusing what is not one', () => {
    expect(CampaignInput.safeParse({ ...base, defaultCountry: 'NG' }).success).toBe(true);
    const message = (input: unknown) => CampaignInput.safeParse(input).error?.issues[0]?.message;
    expect(message({ ...base, defaultCountry: 'XX' })).toBe(
      'is not a country code phone numbers are known for, e.g. NG',
    );
    expect(message({ ...base, defaultCountry: 'Nigeria' })).toBe(
      'must be an ISO 3166-1 alpha-2 country code in capitals, e.g. NG',
    );
    const file = { type: 'file', path: '/data/due.csv' };
    expect(CampaignInput.safeParse({ ...base, audience: { ...file, delimiter: '\t' } }).success).toBe(true);
    expect(message({ ...base, audience: { ...file, delimiter: ';;' } })).toBe('must be one character, e.g. ; or a tab');
    expect(message({ ...base, audience: { ...file, delimiter: '"' } })).toBe('cannot be a quote or a line break');
  });

  it('needs a window with distinct ends and real times', () => {
    expect(SendWindow.safeParse({ start: '09:00', end: '09:00', timeZone: 'UTC' }).success).toBe(false);
    expect(SendWindow.safeParse({ start: '24:00', end: '09:00', timeZone: 'UTC' }).success).toBe(false);
    expect(SendWindow.safeParse({ start: '22:00', end: '06:30:15', timeZone: 'UTC', days: ['mon'] }).success).toBe(
      true,
    );
  });
});

describe('schedule timing', () => {
  const campaign = { sender: 'ACME', message: 'Reminder', audience: { type: 'loader', name: 'due' } };

  it('needs one form of timing, and a one-off cannot mix with recurring ones', () => {
    expect(CampaignScheduleInput.safeParse({ id: 'r', timing: {}, campaign }).success).toBe(false);
    expect(
      CampaignScheduleInput.safeParse({
        id: 'r',
        timing: { at: '2026-03-02T09:00:00+01:00', cron: ['0 9 * * *'] },
        campaign,
      }).success,
    ).toBe(false);
    expect(
      CampaignScheduleInput.safeParse({
        id: 'r',
        timing: { cron: ['0 9 * * MON'], timeZone: 'Africa/Lagos' },
        campaign,
      }).success,
    ).toBe(true);
    expect(CampaignScheduleInput.safeParse({ id: 'bad id', timing: { cron: ['@daily'] }, campaign }).success).toBe(
      false,
    );
  });

  it('turns a one-off into one UTC calendar match with one action', () => {
    const { spec, remainingActions } = compileTiming({ at: '2026-03-02T09:00:30+01:00' });
    expect(remainingActions).toBe(1);
    expect(spec.timezone).toBe('UTC');
    expect(spec.calendars).toEqual([
      expect.objectContaining({ year: 2026, month: 'MARCH', dayOfMonth: 2, hour: 8, minute: 0, second: 30 }),
    ]);
  });

  it('merges changes: a one-off replaces recurring specs and the other way round', () => {
    const recurring = { cron: ['0 9 * * MON'], timeZone: 'Africa/Lagos', jitterMs: 1000 };
    expect(mergeTiming(recurring, { timeZone: 'UTC' })).toEqual({ ...recurring, timeZone: 'UTC' });
    expect(mergeTiming(recurring, { at: '2026-03-02T09:00:00Z' })).toEqual({
      at: '2026-03-02T09:00:00Z',
      timeZone: 'Africa/Lagos',
      jitterMs: 1000,
    });
    expect(mergeTiming({ at: '2026-03-02T09:00:00Z' }, { intervals: [{ everyMs: 60_000 }] })).toEqual({
      intervals: [{ everyMs: 60_000 }],
    });
  });
});
