/** Options of the client and of each call, their defaults, and the metadata attached to results. */
import type { HttpMethod } from '../api/routes.js';
import type { RateLimitState } from './headers.js';

/** One entry per HTTP attempt. Never carries the token; personal data is masked (see redaction.ts). */
export interface LogEntry {
  method: HttpMethod;
  /** The request path relative to baseUrl, e.g. `/messages/msg_123`. */
  path: string;
  /** 1 for the first try, 2 for the first retry, … */
  attempt: number;
  durationMs: number;
  /** HTTP status; absent when no response arrived. */
  status?: number;
  requestId?: string;
  idempotencyKey?: string;
  replayed?: boolean;
  query?: Record<string, string>;
  /** The request body, redacted. */
  body?: unknown;
  error?: { type: string; code?: string; message: string };
  /** Set when the client will retry after this many milliseconds. */
  retryInMs?: number;
  /** Where a response deviated from the contract's schema (paths only; values are never logged). */
  responseIssues?: string[];
}

export type Logger = (entry: LogEntry) => void;

export interface MessagingClientOptions {
  /** The API's base address, including the version segment, e.g. `http://127.0.0.1:4010/v1`. */
  baseUrl: string;
  /** Bearer token. Sent only in the Authorization header; never logged. */
  token: string;
  /** Retries per call after the first attempt (default 2). 0 disables retries. */
  maxRetries?: number;
  /** Per-attempt timeout (default 30 s). */
  timeoutMs?: number;
  /**
   * The longest `Retry-After` the client waits in-process (default 30 s). A longer one is not waited:
   * the RateLimitError is thrown with `retryAfterMs` so the caller can schedule the retry.
   */
  maxRetryAfterMs?: number;
  /** Backoff of 5xx / network retries: full jitter up to min(max, initial × 2^retry) (defaults 500 ms, 8 s). */
  initialRetryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** Injectable fetch (defaults to the platform's). */
  fetch?: typeof fetch;
  logger?: Logger;
  /** Log phone numbers, e-mail addresses and message texts unmasked (default false). Secrets stay masked. */
  logPersonalData?: boolean;
  /**
   * Throw when a response's payload does not match the contract's schema (default false: a payload
   * inside a well-formed envelope is returned as sent, and the deviations reported to the logger).
   */
  strictResponses?: boolean;
  userAgent?: string;
}

export interface RequestOptions {
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number;
  /** Aborting rejects the call promptly with the signal's reason; an aborted call is never retried. */
  signal?: AbortSignal;
  /** Overrides the client's maxRetries for this call. */
  maxRetries?: number;
}

export interface SendOptions extends RequestOptions {
  /**
   * Makes the send idempotent across processes: the same key replays the original response instead of
   * sending (and charging) again. Without one the client makes a UUID per call, reused on its own retries.
   */
  idempotencyKey?: string;
}

/** What the client knows about the response a result came from (stripe-style `lastResponse`). */
export interface ResponseMeta {
  status: number;
  requestId?: string;
  idempotencyKey?: string;
  /** The provider replayed an earlier response for the same Idempotency-Key (no new send, no new charge). */
  replayed: boolean;
  rateLimit?: RateLimitState;
}

/** A result with its (non-enumerable, so it never serializes) response metadata. */
export type WithResponse<T> = T & { readonly lastResponse: ResponseMeta };

export const DEFAULTS = {
  maxRetries: 2,
  timeoutMs: 30_000,
  maxRetryAfterMs: 30_000,
  initialRetryDelayMs: 500,
  maxRetryDelayMs: 8_000,
} as const;
