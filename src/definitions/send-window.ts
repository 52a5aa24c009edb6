/**
 * Send windows in local time ("09:00-18:00 Africa/Lagos, Mon-Fri"), computed with Intl over the workflow's
 * deterministic clock. Pure functions: safe in workflow code, unit-tested on their own.
 */
import type { SendWindow, Weekday } from '../api/campaign-io.js';
import { RECIPIENT_TIME_ZONE } from '../api/constants.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const WEEKDAY_INDEX: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };
const DAY_NAMES: readonly Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface WallClock {
  /** The local date and time read as if it were UTC (so day arithmetic is plain arithmetic). */
  wallMs: number;
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallClock(instant: number, timeZone: string): WallClock {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
  const wallMs =
    Date.UTC(
      Number(parts.year),
      Number(parts.month) - 1,
      Number(parts.day),
      Number(parts.hour),
      Number(parts.minute),
      Number(parts.second),
    ) +
    (((instant % 1000) + 1000) % 1000);
  return { wallMs, weekday: WEEKDAY_INDEX[parts.weekday!] ?? 0 };
}

function secondsOf(clock: string): number {
  const [h = 0, m = 0, s = 0] = clock.split(':').map(Number);
  return (h * 60 + m) * 60 + s;
}

/**
 * The instant at which the local wall time `wallMs` occurs (the later reading when DST makes it ambiguous or
 * skips it).
 */
function instantOfWall(wallMs: number, timeZone: string, near: number): number {
  // offset = wall - instant; two refinements settle it across a DST change.
  let guess = wallMs - (wallClock(near, timeZone).wallMs - near);
  guess = wallMs - (wallClock(guess, timeZone).wallMs - guess);
  return guess;
}

/** 0 when `now` is inside the window, otherwise how long until it next opens (ms). */
export function msUntilWindowOpens(now: number, window: SendWindow): number {
  const next = nextWindowOpening(now, window);
  return next === null ? 0 : Math.max(0, next - now);
}

/** When the window next opens, or null if it is open at `now`. */
export function nextWindowOpening(now: number, window: SendWindow): number | null {
  const { wallMs, weekday } = wallClock(now, window.timeZone);
  const allowed = new Set((window.days ?? DAY_NAMES).map((d) => DAY_NAMES.indexOf(d)));
  const start = secondsOf(window.start) * 1000;
  const end = secondsOf(window.end) * 1000;
  const midnight = wallMs - (((wallMs % DAY_MS) + DAY_MS) % DAY_MS);
  const sinceMidnight = wallMs - midnight;

  if (start < end) {
    if (allowed.has(weekday) && sinceMidnight >= start && sinceMidnight < end) return null;
  } else {
    // Spans midnight: open late today (a window starting today) or early today (one that started yesterday).
    if (allowed.has(weekday) && sinceMidnight >= start) return null;
    if (allowed.has((weekday + 6) % 7) && sinceMidnight < end) return null;
  }
  for (let day = 0; day <= 7; day++) {
    if (!allowed.has((weekday + day) % 7)) continue;
    const opening = midnight + day * DAY_MS + start;
    if (opening > wallMs) return instantOfWall(opening, window.timeZone, now);
  }
  return null; // unreachable: `days` is never empty
}

/**
 * The failure a chunk send raises when its window closed before the request was made (nothing was sent):
 * the chunk waits for the window's next opening.
 */
export const SEND_WINDOW_CLOSED = 'SendWindowClosed';

/** A send request's window, checked by the activity right before it calls the provider. */
export interface RequestWindow {
  /** The window, in the zone of this request's recipients. */
  window: SendWindow;
  /** An earlier attempt under the same idempotency key may have been sent: complete it, window or not. */
  mayHaveBeenSent: boolean;
}

/** The window a chunk is sent in: the campaign's, or in the chunk's own zone for a window in local hours. */
export function windowOfChunk(window: SendWindow | undefined, chunkTimeZone: string | undefined): SendWindow | null {
  if (!window) return null;
  if (window.timeZone !== RECIPIENT_TIME_ZONE) return window;
  return chunkTimeZone ? { ...window, timeZone: chunkTimeZone } : null;
}
