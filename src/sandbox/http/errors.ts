/** Errors the API answers with: one class carrying a code from src/api/errors.ts, its status derived from it. */
import { ERROR_CODES, type ErrorBody, type ErrorCode, type ErrorDetail } from '../../api/errors.js';

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. Retry-After on a 429 or Allow on a 405. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_CODES[code];
  }

  body(): ErrorBody {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }
}

export const notFound = (what: string) => new ApiError('not_found', `No ${what} with this id in your account`);
