import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  IdempotencyConflictError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
} from '../../src/client/index.js';
import { parseRateLimit, parseRetryAfter } from '../../src/client/headers.js';
import { backoffDelay, decideRetry, type RetryQuestion, type RetrySettings } from '../../src/client/retry-policy.js';

const settings: RetrySettings = {
  maxRetries: 3,
  maxRetryAfterMs: 10_000,
  initialRetryDelayMs: 500,
  maxRetryDelayMs: 8_000,
};
const api = { status: 0, code: 'x', message: 'x' };

function ask(failure: RetryQuestion['failure'], extra: Partial<RetryQuestion> = {}) {
  return decideRetry({
    failure,
    retriesDone: 0,
    replaySafe: true,
    hasIdempotencyKey: true,
    settings,
    random: () => 1,
    ...extra,
  });
}

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(' 0 ')).toBe(0);
    expect(parseRetryAfter('1.5')).toBe(1500);
  });
  it('reads an HTTP-date relative to now, never negative', () => {
    const now = Date.parse('2026-01-31T09:00:00Z');
    expect(parseRetryAfter('Sat, 31 Jan 2026 09:00:07 GMT', now)).toBe(7000);
    expect(parseRetryAfter('Sat, 31 Jan 2026 08:59:00 GMT', now)).toBe(0);
  });
  it('ignores absent or unreadable values', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('-5')).toBeUndefined();
  });
});

describe('parseRateLimit', () => {
  const now = Date.parse('2026-01-31T09:00:00Z');
  it('reads limit, remaining and a reset in seconds from now', () => {
    const state = parseRateLimit(
      { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '30' },
      now,
    );
    expect(state).toEqual({ limit: 120, remaining: 7, resetAt: new Date(now + 30_000) });
  });
  it('reads a reset given as a Unix time', () => {
    const state = parseRateLimit(
      { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 60) },
      now,
    );
    expect(state?.resetAt).toEqual(new Date(now + 60_000));
  });
  it('is undefined when the headers are missing', () => {
    expect(parseRateLimit({}, now)).toBeUndefined();
    expect(parseRateLimit({ 'x-ratelimit-limit': '120' }, now)).toBeUndefined();
  });
});

describe('backoffDelay (full jitter)', () => {
  it('grows exponentially up to the cap and spans [0, cap]', () => {
    expect(backoffDelay(0, settings, () => 1)).toBe(500);
    expect(backoffDelay(3, settings, () => 1)).toBe(4000);
    expect(backoffDelay(10, settings, () => 1)).toBe(8000);
    expect(backoffDelay(3, settings, () => 0)).toBe(0);
  });
});

describe('decideRetry', () => {
  it('retries a 429 after exactly Retry-After, whatever the method', () => {
    expect(ask(new RateLimitError(api), { retryAfterMs: 2000, replaySafe: false, hasIdempotencyKey: false })).toEqual({
      retry: true,
      delayMs: 2000,
    });
  });
  it('hands a Retry-After beyond maxRetryAfterMs back to the caller, and waits one of exactly that long', () => {
    expect(ask(new RateLimitError(api), { retryAfterMs: 10_001 })).toEqual({ retry: false });
    expect(ask(new RateLimitError(api), { retryAfterMs: 10_000 })).toEqual({ retry: true, delayMs: 10_000 });
  });
  it('waits half the conflict delay plus a jittered half, doubling with each retry', () => {
    const conflict = new IdempotencyConflictError(api);
    expect(ask(conflict, { random: () => 0 })).toEqual({ retry: true, delayMs: 250 });
    expect(ask(conflict, { random: () => 1 })).toEqual({ retry: true, delayMs: 500 });
    expect(ask(conflict, { random: () => 0.5, retriesDone: 2 })).toEqual({ retry: true, delayMs: 1500 });
  });
  it('retries a 409 shortly, only when the request carries an idempotency key', () => {
    const decision = ask(new IdempotencyConflictError(api));
    expect(decision.retry && decision.delayMs).toBeGreaterThan(0);
    expect(ask(new IdempotencyConflictError(api), { hasIdempotencyKey: false })).toEqual({ retry: false });
  });
  it('retries 5xx and network failures only when replay-safe', () => {
    for (const failure of [new ServerError(api), new ConnectionError('down'), new TimeoutError('slow')]) {
      expect(ask(failure)).toEqual({ retry: true, delayMs: 500 });
      expect(ask(failure, { replaySafe: false })).toEqual({ retry: false });
    }
  });
  it('waits at least a 503 Retry-After', () => {
    expect(ask(new ServerError(api), { retryAfterMs: 3000 })).toEqual({ retry: true, delayMs: 3000 });
  });
  it('never retries client errors, and stops at maxRetries', () => {
    expect(ask(new ValidationError(api))).toEqual({ retry: false });
    expect(ask(new NotFoundError(api))).toEqual({ retry: false });
    expect(ask(new ServerError(api), { retriesDone: 3 })).toEqual({ retry: false });
  });
});
