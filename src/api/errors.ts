/** The error body and its machine-readable codes (the spec leaves its fields open: `{code, message, details?}`). */
import { z } from 'zod';

export const ERROR_CODES = {
  bad_request: 400,
  invalid_json: 400,
  invalid_cursor: 400,
  unauthorized: 401,
  insufficient_balance: 402,
  insufficient_scope: 403,
  ip_not_allowed: 403,
  spend_cap_exceeded: 403,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  sender_not_approved: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ErrorDetail = z.object({
  path: z.string().meta({ description: 'Dotted path of the offending field, empty for the whole body' }),
  message: z.string(),
});
export type ErrorDetail = z.infer<typeof ErrorDetail>;

export const ErrorBody = z
  .object({
    code: z.string().meta({ description: 'Machine-readable error code' }),
    message: z.string().meta({ description: 'Human-readable explanation' }),
    details: z.array(ErrorDetail).optional(),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Field-level details from a zod failure, in the shape error bodies carry. */
export function detailsOf(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
}
