/**
 * The client's error hierarchy. Callers (notably the worker's activities) classify failures with
 * `instanceof` on these classes, so their names and parentage are part of the public API.
 */
import type { ErrorDetail } from '../api/errors.js';

export type { ErrorDetail };

/** Root of every error this client throws. */
export class MessagingError extends Error {
  override name = 'MessagingError';
}

/** The provider's response headers, as a plain (serializable) object with lower-case names. */
export type ResponseHeaders = Record<string, string>;

export interface ApiErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string;
  details?: ErrorDetail[];
  headers?: ResponseHeaders;
}

/** The provider answered with an error status (or with a body the client could not understand). */
export class MessagingApiError extends MessagingError {
  override name = 'MessagingApiError';
  readonly status: number;
  /** Machine-readable code, e.g. `insufficient_scope`; `http_<status>` when the body carried none. */
  readonly code: string;
  readonly requestId?: string;
  readonly details: ErrorDetail[];
  readonly headers: ResponseHeaders;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    if (init.requestId !== undefined) this.requestId = init.requestId;
    this.details = init.details ?? [];
    this.headers = init.headers ?? {};
  }
}

/** 401: missing, invalid or revoked token. */
export class AuthenticationError extends MessagingApiError {
  override name = 'AuthenticationError';
}

/** 402: the wallet cannot pay for the request. */
export class InsufficientBalanceError extends MessagingApiError {
  override name = 'InsufficientBalanceError';
}

/** 403: `code` tells a missing scope (`insufficient_scope`), the IP allowlist and the spend cap apart. */
export class PermissionDeniedError extends MessagingApiError {
  override name = 'PermissionDeniedError';
}

/** 403 `ip_not_allowed`: the account's IP allowlist does not include this caller. */
export class IpNotAllowedError extends PermissionDeniedError {
  override name = 'IpNotAllowedError';
}

/** 403 `spend_cap_exceeded`: the request would take the account past its spend cap. */
export class SpendCapExceededError extends PermissionDeniedError {
  override name = 'SpendCapExceededError';
}

/** 404: no such record (for this account). */
export class NotFoundError extends MessagingApiError {
  override name = 'NotFoundError';
}

/** 409: a request with the same Idempotency-Key is still in progress. */
export class IdempotencyConflictError extends MessagingApiError {
  override name = 'IdempotencyConflictError';
}

/** 422: the provider rejected the request's content; `details` lists the offending fields. */
export class ValidationError extends MessagingApiError {
  override name = 'ValidationError';
}

/** 429: rate limited. `retryAfterMs` comes from `Retry-After` (seconds or HTTP-date) when present. */
export class RateLimitError extends MessagingApiError {
  override name = 'RateLimitError';
  readonly retryAfterMs?: number;

  constructor(init: ApiErrorInit & { retryAfterMs?: number }) {
    super(init);
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
  }
}

/** 5xx: the provider failed. */
export class ServerError extends MessagingApiError {
  override name = 'ServerError';
}

/** The request never got an HTTP answer (DNS, refused connection, reset socket…). */
export class ConnectionError extends MessagingError {
  override name = 'ConnectionError';
}

/** No answer within `timeoutMs`. The request may or may not have reached the provider. */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
}

/** The client refused the input before sending anything; `details` lists the offending fields. */
export class InvalidInputError extends MessagingError {
  override name = 'InvalidInputError';
  readonly details: ErrorDetail[];

  constructor(message: string, details: ErrorDetail[] = []) {
    super(message);
    this.details = details;
  }
}
