/**
 * When to retry and how long to wait. Pure functions of the failure, so the rules are testable alone:
 *
 * - 429: always safe (the provider did not act), and never sooner than `Retry-After`. A `Retry-After`
 *   beyond `maxRetryAfterMs` is not waited in-process: the error goes back to the caller, whose scheduler
 *   (e.g. a Temporal activity retry) can wait without holding a process.
 * - 409 (same Idempotency-Key still in progress): retried after a short delay, so the retry meets the
 *   finished original and replays it.
 * - 5xx, network failures and timeouts: exponential backoff with full jitter, but only when repeating
 *   the request cannot repeat its effect: a GET/DELETE, or a POST that carries an Idempotency-Key.
 */
import {
  ConnectionError,
  IdempotencyConflictError,
  type MessagingError,
  RateLimitError,
  ServerError,
} from './errors.js';

export interface RetrySettings {
  maxRetries: number;
  maxRetryAfterMs: number;
  initialRetryDelayMs: number;
  maxRetryDelayMs: number;
}

export type RetryDecision = { retry: false } | { retry: true; delayMs: number };

const NO_RETRY: RetryDecision = { retry: false };

/** Base of the delay before retrying a 409 when the provider gave no Retry-After. */
export const CONFLICT_RETRY_DELAY_MS = 500;

/** Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): uniform in [0, cap]. */
export function backoffDelay(retry: number, settings: RetrySettings, random = Math.random): number {
  const cap = Math.min(settings.maxRetryDelayMs, settings.initialRetryDelayMs * 2 ** retry);
  return Math.round(random() * cap);
}

export interface RetryQuestion {
  failure: MessagingError;
  /** Retries already made for this call (0 before the first retry). */
  retriesDone: number;
  /** Repeating the request cannot repeat its effect (GET/DELETE, or it carries an Idempotency-Key). */
  replaySafe: boolean;
  hasIdempotencyKey: boolean;
  /** `Retry-After` of the failed response, if it had one. */
  retryAfterMs?: number;
  settings: RetrySettings;
  random?: () => number;
}

export function decideRetry(q: RetryQuestion): RetryDecision {
  const { failure, settings } = q;
  const random = q.random ?? Math.random;
  if (q.retriesDone >= settings.maxRetries) return NO_RETRY;
  const tooLong = q.retryAfterMs !== undefined && q.retryAfterMs > settings.maxRetryAfterMs;

  if (failure instanceof RateLimitError) {
    if (tooLong) return NO_RETRY;
    return { retry: true, delayMs: q.retryAfterMs ?? backoffDelay(q.retriesDone, settings, random) };
  }
  if (failure instanceof IdempotencyConflictError) {
    if (!q.hasIdempotencyKey || tooLong) return NO_RETRY;
    // Half fixed, half jittered: short, growing, and never zero (an immediate retry would just conflict again).
    const base = CONFLICT_RETRY_DELAY_MS * 2 ** q.retriesDone;
    return { retry: true, delayMs: q.retryAfterMs ?? Math.round(base / 2 + (random() * base) / 2) };
  }
  if (failure instanceof ServerError || failure instanceof ConnectionError) {
    if (!q.replaySafe || tooLong) return NO_RETRY;
    return { retry: true, delayMs: Math.max(q.retryAfterMs ?? 0, backoffDelay(q.retriesDone, settings, random)) };
  }
  return NO_RETRY;
}
