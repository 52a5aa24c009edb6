/** Send windows in local time: open/closed, the next opening across midnight, weekdays and DST. */
import { describe, expect, it } from 'vitest';
import { msUntilWindowOpens, nextWindowOpening } from '../../src/definitions/send-window.js';

const at = (iso: string) => Date.parse(iso);
const MINUTE = 60_000;

describe('send window', () => {
  const lagos = { start: '09:00', end: '18:00', timeZone: 'Africa/Lagos' }; // UTC+1, no DST

  it('is open inside the local hours and closed at the end', () => {
    expect(nextWindowOpening(at('2026-03-02T08:00:00Z'), lagos)).toBeNull(); // 09:00 Lagos
    expect(nextWindowOpening(at('2026-03-02T16:59:59Z'), lagos)).toBeNull(); // 17:59:59
    expect(nextWindowOpening(at('2026-03-02T17:00:00Z'), lagos)).toBe(at('2026-03-03T08:00:00Z')); // 18:00 -> tomorrow 09:00
  });

  it('waits until today’s opening before it', () => {
    expect(msUntilWindowOpens(at('2026-03-02T07:30:00Z'), lagos)).toBe(30 * MINUTE);
    expect(msUntilWindowOpens(at('2026-03-02T07:59:59.250Z'), lagos)).toBe(750);
  });

  it('spans midnight when the end is before the start', () => {
    const night = { start: '22:00', end: '02:00', timeZone: 'UTC' };
    expect(nextWindowOpening(at('2026-03-02T23:00:00Z'), night)).toBeNull();
    expect(nextWindowOpening(at('2026-03-03T01:59:00Z'), night)).toBeNull();
    expect(nextWindowOpening(at('2026-03-03T02:00:00Z'), night)).toBe(at('2026-03-03T22:00:00Z'));
  });

  it('skips days the window does not open on', () => {
    const weekdays = { ...lagos, days: ['mon', 'tue', 'wed', 'thu', 'fri'] as const };
    // Friday 2026-03-06 19:00 Lagos -> Monday 2026-03-09 09:00 Lagos.
    expect(nextWindowOpening(at('2026-03-06T18:00:00Z'), { ...weekdays, days: [...weekdays.days] })).toBe(
      at('2026-03-09T08:00:00Z'),
    );
    // Saturday midday: closed although within the hours.
    expect(nextWindowOpening(at('2026-03-07T11:00:00Z'), { ...weekdays, days: [...weekdays.days] })).toBe(
      at('2026-03-09T08:00:00Z'),
    );
  });

  it('honours seconds (short windows in tests)', () => {
    const short = { start: '10:00:05', end: '10:00:10', timeZone: 'UTC' };
    expect(msUntilWindowOpens(at('2026-03-02T10:00:00Z'), short)).toBe(5000);
    expect(msUntilWindowOpens(at('2026-03-02T10:00:07Z'), short)).toBe(0);
  });

  it('finds the right instant across a daylight-saving change', () => {
    // New York springs forward on 2026-03-08: 09:00 is 14:00Z before and 13:00Z after.
    const ny = { start: '09:00', end: '17:00', timeZone: 'America/New_York' };
    expect(nextWindowOpening(at('2026-03-07T23:00:00Z'), ny)).toBe(at('2026-03-08T13:00:00Z'));
    expect(nextWindowOpening(at('2026-03-06T23:00:00Z'), ny)).toBe(at('2026-03-07T14:00:00Z'));
  });
});
