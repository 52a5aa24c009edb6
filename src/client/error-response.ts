/**
 * Turns an error response into the matching error class. The real service's error field names are
 * not in the spec, so the code is read from `code`, `error_code` or `error.code`, and the message
 * from the equivalent places.
 */
import { ErrorDetail } from '../api/errors.js';
import { isJsonObject } from '../api/json.js';
import {
  type ApiErrorInit,
  AuthenticationError,
  IdempotencyConflictError,
  InsufficientBalanceError,
  IpNotAllowedError,
  MessagingApiError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  type ResponseHeaders,
  ServerError,
  SpendCapExceededError,
  ValidationError,
} from './errors.js';

function firstString(...candidates: unknown[]): string | undefined {
  return candidates.find((c): c is string => typeof c === 'string' && c.length > 0);
}

/** Keeps the detail entries that have the documented `{path, message}` shape; drops the rest. */
function detailsFrom(value: unknown): ErrorDetail[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) => {
    const parsed = ErrorDetail.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
}

export interface ErrorFields {
  code: string;
  message: string;
  details: ErrorDetail[];
}

/** Reads code, message and details from whatever error body the provider sent (possibly none). */
export function readErrorBody(status: number, body: unknown): ErrorFields {
  const root = isJsonObject(body) ? body : {};
  const nested = isJsonObject(root.error) ? root.error : {};
  const code = firstString(root.code, root.error_code, nested.code) ?? `http_${status}`;
  const message =
    firstString(root.message, nested.message, root.error_message, root.error, root.detail) ??
    `The provider answered HTTP ${status}`;
  const details = detailsFrom(root.details ?? nested.details);
  return { code, message, details };
}

export interface ErrorContext {
  status: number;
  body: unknown;
  headers: ResponseHeaders;
  requestId?: string;
  retryAfterMs?: number;
}

/** The error class for an HTTP status (and, for 403, the code). */
export function errorFromResponse(ctx: ErrorContext): MessagingApiError {
  const fields = readErrorBody(ctx.status, ctx.body);
  const init: ApiErrorInit = { status: ctx.status, headers: ctx.headers, ...fields };
  if (ctx.requestId !== undefined) init.requestId = ctx.requestId;
  switch (ctx.status) {
    case 401:
      return new AuthenticationError(init);
    case 402:
      return new InsufficientBalanceError(init);
    case 403:
      if (fields.code === 'ip_not_allowed') return new IpNotAllowedError(init);
      if (fields.code === 'spend_cap_exceeded') return new SpendCapExceededError(init);
      return new PermissionDeniedError(init);
    case 404:
      return new NotFoundError(init);
    case 409:
      return new IdempotencyConflictError(init);
    case 422:
      return new ValidationError(init);
    case 429:
      return new RateLimitError(ctx.retryAfterMs === undefined ? init : { ...init, retryAfterMs: ctx.retryAfterMs });
  }
  if (ctx.status >= 500) return new ServerError(init);
  return new MessagingApiError(init);
}
