/** Each recipient's zone for a window in local hours, grouping by text and zone, and a chunk's window. */
import { describe, expect, it } from 'vitest';
import { groupByKey, timeZonesOf } from '../../activities/audience-texts.js';
import { recipientTimeZone, zonesOfNumber } from '../../activities/recipient-time-zone.js';
import { CampaignInput, SendWindow, TimeZone } from '../../src/api/campaign-io.js';
import { isTimeZone } from '../../src/api/time-zone.js';
import { nextWindowOpening, windowOfChunk } from '../../src/definitions/send-window.js';
import { initialState, queueChunks } from '../../workflows/campaign-state.js';

const NG = '2348012345678';
const US = '12025550123';
const JP = '81312345678';

describe("a recipient's time zone", () => {
  it('takes the field first: the named one, else timezone/time_zone/tz in any case', () => {
    expect(recipientTimeZone(NG, { TZ: 'Asia/Tokyo' }, {})).toEqual({ ok: true, timeZone: 'Asia/Tokyo' });
    expect(recipientTimeZone(NG, { zone: 'Asia/Tokyo' }, { timeZoneField: 'Zone' })).toEqual({
      ok: true,
      timeZone: 'Asia/Tokyo',
    });
    expect(recipientTimeZone(NG, { tz: 'Mars/Olympus' }, {})).toMatchObject({
      ok: false,
      reason: expect.stringContaining('"Mars/Olympus" is not a known IANA time zone'),
    });
  });

  it('judges a zone name as the campaign schema does: one isTimeZone for both', () => {
    for (const name of ['Asia/Tokyo', 'UTC', 'Mars/Olympus', 'Lagos']) {
      expect(recipientTimeZone(NG, { tz: name }, {}).ok).toBe(isTimeZone(name));
      expect(TimeZone.safeParse(name).success).toBe(isTimeZone(name));
    }
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(TimeZone.safeParse('Mars/Olympus').error?.issues[0]?.message).toBe(
      'is not a known IANA time zone, e.g. Africa/Lagos',
    );
  });

  it('infers the zone of a country that has one, from the number', () => {
    expect(zonesOfNumber(NG)).toEqual({ country: 'NG', zones: ['Africa/Lagos'] });
    expect(recipientTimeZone(JP, undefined, {})).toEqual({ ok: true, timeZone: 'Asia/Tokyo' });
    expect(recipientTimeZone(NG, { tz: ' ' }, {})).toEqual({ ok: true, timeZone: 'Africa/Lagos' });
  });

  it('uses the default for a country of several zones, and says so without one', () => {
    expect(zonesOfNumber(US).zones.length).toBeGreaterThan(1);
    expect(recipientTimeZone(US, {}, { defaultTimeZone: 'America/New_York' })).toEqual({
      ok: true,
      timeZone: 'America/New_York',
    });
    expect(recipientTimeZone(US, {}, {})).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /country \(US\) has \d+ zones; give a timezone\/time_zone\/tz field or a defaultTimeZone/,
      ),
    });
  });

  it('fails a page naming the row of a recipient without a zone', () => {
    const page = { recipients: [NG, US], positions: [0, 3], fields: [undefined, { name: 'Ada' }], firstIndex: 10 };
    expect(() => timeZonesOf({}, page)).toThrow(/row 14 of the audience/);
    expect(timeZonesOf({ defaultTimeZone: 'UTC' }, page)).toEqual(['Africa/Lagos', 'UTC']);
  });
});

describe('grouping by text and zone', () => {
  it('gives recipients with the same text in different zones requests of their own', () => {
    expect(groupByKey(['a', 'b', 'c'], ['Hi', 'Hi', 'Hi'], ['Asia/Tokyo', 'Africa/Lagos', 'Asia/Tokyo'])).toEqual({
      recipients: ['a', 'c', 'b'],
      groups: [
        { size: 2, timeZone: 'Asia/Tokyo' },
        { size: 1, timeZone: 'Africa/Lagos' },
      ],
    });
  });

  it('queues one chunk per group, numbered in order, each with its zone and page', () => {
    const state = initialState('2026-01-01T00:00:00Z', { kind: 'source', cursor: null, exhausted: false });
    state.nextChunk = 7;
    const page = { cursor: '120', firstIndex: 5 };
    const chunks = queueChunks(state, ['a', 'c', 'b'], [{ size: 2, timeZone: 'Asia/Tokyo' }, { size: 1 }], page);
    expect(chunks).toEqual([
      { number: 7, recipients: ['a', 'c'], timeZone: 'Asia/Tokyo', page },
      { number: 8, recipients: ['b'], page },
    ]);
    expect(state.pendingChunks).toEqual(chunks);
    expect(state.nextChunk).toBe(9);
  });
});

describe("a chunk's window", () => {
  const window = { start: '09:00', end: '17:00', timeZone: 'recipient' } as const;

  it("is the campaign's, or in the chunk's zone for local hours", () => {
    expect(windowOfChunk(undefined, 'Asia/Tokyo')).toBeNull();
    const lagos = { ...window, timeZone: 'Africa/Lagos' };
    expect(windowOfChunk(lagos, undefined)).toBe(lagos);
    expect(windowOfChunk(window, 'Asia/Tokyo')).toEqual({ ...window, timeZone: 'Asia/Tokyo' });
    // 10:00 UTC is 19:00 in Tokyo (closed until 09:00 tomorrow, 00:00 UTC) and 11:00 in Lagos (open).
    const at = Date.parse('2026-03-02T10:00:00Z');
    expect(nextWindowOpening(at, windowOfChunk(window, 'Africa/Lagos')!)).toBeNull();
    expect(nextWindowOpening(at, windowOfChunk(window, 'Asia/Tokyo')!)).toBe(Date.parse('2026-03-03T00:00:00Z'));
  });

  it("is checked by the input schema: 'recipient' needs a paged audience, its options need 'recipient'", () => {
    expect(SendWindow.safeParse({ ...window, timeZoneField: 'tz', defaultTimeZone: 'UTC' }).success).toBe(true);
    expect(SendWindow.safeParse({ ...window, timeZone: 'UTC', timeZoneField: 'tz' }).success).toBe(false);
    expect(SendWindow.safeParse({ ...window, defaultTimeZone: 'Nowhere/City' }).success).toBe(false);
    const inline = { sender: 'ACME', message: 'Hi', audience: { type: 'inline', recipients: [NG] } };
    expect(CampaignInput.safeParse({ ...inline, sendWindow: window }).error?.issues[0]?.message).toContain(
      'needs a file, URL or loader audience',
    );
  });
});
