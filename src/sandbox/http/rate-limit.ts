/**
 * Fixed one-minute windows, counted in memory: per token for every authenticated request, and per source
 * IP for OTP sends. Counters are not persisted; a restart simply starts fresh windows.
 */
import type { Response } from 'express';
import { RATE_LIMIT_HEADERS } from '../../api/routes.js';
import { ApiError } from './errors.js';

const WINDOW_MS = 60_000;

export interface LimitState {
  limit: number;
  remaining: number;
  /** When the current window ends (ms since epoch). */
  resetAt: number;
  allowed: boolean;
}

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  hit(key: string, limit: number, now: number): LimitState {
    let window = this.windows.get(key);
    if (!window || now >= window.start + WINDOW_MS || now < window.start) {
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    const allowed = window.count < limit;
    if (allowed) window.count += 1;
    return { limit, remaining: Math.max(0, limit - window.count), resetAt: window.start + WINDOW_MS, allowed };
  }

  /** Keys whose window is held in memory. */
  get size(): number {
    return this.windows.size;
  }

  /** Forgets windows that have ended, so the map does not grow with every token and IP ever seen. */
  prune(now: number): void {
    for (const [key, window] of this.windows) if (now >= window.start + WINDOW_MS) this.windows.delete(key);
  }
}

/** X-RateLimit-Reset is the end of the window in Unix seconds (the convention GitHub and others use). */
export function setRateLimitHeaders(res: Response, state: LimitState): void {
  res.setHeader(RATE_LIMIT_HEADERS.limit, String(state.limit));
  res.setHeader(RATE_LIMIT_HEADERS.remaining, String(state.remaining));
  res.setHeader(RATE_LIMIT_HEADERS.reset, String(Math.ceil(state.resetAt / 1000)));
}

export function rateLimited(state: LimitState, now: number, what: string): ApiError {
  const seconds = Math.max(1, Math.ceil((state.resetAt - now) / 1000));
  return new ApiError(
    'rate_limited',
    `${what}: at most ${state.limit} requests per minute; retry in ${seconds} s`,
    undefined,
    {
      'Retry-After': String(seconds),
    },
  );
}
