/** The one duration syntax of msgflow's CLI options and environment variables. */
import { describe, expect, it } from 'vitest';
import { DurationError, durationText, formatDuration, parseDuration } from '../../src/api/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['2d', 172_800_000],
    ['1m30s250ms', 90_250],
    [' 45s ', 45_000],
    ['0', 0],
    ['0s', 0],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['30', '"30" has no unit: write 30s, 30m, …'],
    ['', 'a duration is required, e.g. 500ms, 30s, 10m, 1h30m (units: ms, s, m, h, d)'],
    ['10 minutes', '"10 minutes" is not a duration, e.g. 500ms, 30s, 10m, 1h30m (units: ms, s, m, h, d)'],
    ['5w', '"5w": unknown unit "w", e.g. 500ms, 30s, 10m, 1h30m (units: ms, s, m, h, d)'],
    ['-5s', '"-5s" is not a duration, e.g. 500ms, 30s, 10m, 1h30m (units: ms, s, m, h, d)'],
    ['1h30', '"1h30" is not a duration, e.g. 500ms, 30s, 10m, 1h30m (units: ms, s, m, h, d)'],
    ['100us', '"100us": the smallest unit is ms'],
    ['PT30S', '"PT30S" is not a duration, e.g. 500ms, 30s, 10m, 1h30m (units: ms, s, m, h, d)'],
  ])('refuses %j: %s', (text, message) => {
    expect(() => parseDuration(text)).toThrow(new DurationError(message));
  });
});

describe('formatDuration', () => {
  it('writes the shortest form that parses back', () => {
    for (const ms of [0, 1, 999, 1000, 90_250, 5_400_000, 86_400_000, 90_061_001]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
    expect(formatDuration(5_400_000)).toBe('1h30m');
  });
});

describe('durationText (zod)', () => {
  it('gives milliseconds and speaks in durations when out of bounds', () => {
    const schema = durationText({ min: 1, max: 60_000 });
    expect(schema.parse('2s')).toBe(2000);
    expect(schema.safeParse('2m').error?.issues[0]?.message).toBe('must be at most 1m');
    expect(schema.safeParse('0').error?.issues[0]?.message).toBe('must be at least 1ms');
    expect(schema.safeParse('2').error?.issues[0]?.message).toBe('"2" has no unit: write 2s, 2m, …');
  });
});
