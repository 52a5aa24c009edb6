/** Reading the response headers the client acts on: Retry-After, X-RateLimit-*, request id, replay flag. */
import { IDEMPOTENT_REPLAYED_HEADER, RATE_LIMIT_HEADERS } from '../api/routes.js';
import type { ResponseHeaders } from './errors.js';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** When the window resets (from X-RateLimit-Reset). */
  resetAt: Date;
}

/** Request id headers, in the order they are tried (the real service's name is not documented). */
const REQUEST_ID_HEADERS = ['x-request-id', 'request-id'];

export function headersToObject(headers: Headers): ResponseHeaders {
  const out: ResponseHeaders = {};
  headers.forEach((value, name) => {
    out[name.toLowerCase()] = value;
  });
  return out;
}

export function requestIdOf(headers: ResponseHeaders): string | undefined {
  for (const name of REQUEST_ID_HEADERS) if (headers[name]) return headers[name];
  return undefined;
}

export function isReplayed(headers: ResponseHeaders): boolean {
  return headers[IDEMPOTENT_REPLAYED_HEADER.toLowerCase()]?.trim().toLowerCase() === 'true';
}

/**
 * `Retry-After` in milliseconds from `now`: either delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  // An HTTP-date always names its weekday and month; bare numbers like "-5" must not pass as dates.
  const date = /[a-z]/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * X-RateLimit-Reset is written either as seconds until the reset or as a Unix time in seconds
 * (GitHub style); values this large can only be the latter.
 */
const UNIX_SECONDS_THRESHOLD = 1_000_000_000;

function parseReset(value: string, now: number): Date | undefined {
  const n = Number(value.trim());
  if (!Number.isFinite(n) || n < 0) return undefined;
  return new Date(n >= UNIX_SECONDS_THRESHOLD ? n * 1000 : now + n * 1000);
}

export function parseRateLimit(headers: ResponseHeaders, now = Date.now()): RateLimitState | undefined {
  const limit = Number(headers[RATE_LIMIT_HEADERS.limit.toLowerCase()]);
  const remaining = Number(headers[RATE_LIMIT_HEADERS.remaining.toLowerCase()]);
  const resetHeader = headers[RATE_LIMIT_HEADERS.reset.toLowerCase()];
  const resetAt = resetHeader === undefined ? undefined : parseReset(resetHeader, now);
  if (!Number.isFinite(limit) || !Number.isFinite(remaining) || resetAt === undefined) return undefined;
  return { limit, remaining, resetAt };
}
