/**
 * The one place where a provider error becomes a Temporal retry decision (errors are
 * classified once): causes no retry can fix fail the activity for good, with a failure type per cause;
 * 429 retries no sooner than the provider's Retry-After; 409 (same key still in progress) retries shortly;
 * everything else (5xx, network, timeouts) is left to the activity's retry policy with backoff.
 */
import { ApplicationFailure } from '@temporalio/activity';
import {
  AuthenticationError,
  IdempotencyConflictError,
  InsufficientBalanceError,
  InvalidInputError,
  type MessagingApiError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ValidationError,
} from '../src/client/errors.js';
import { FAILURE_TYPES } from '../src/definitions/failure-types.js';

const IN_PROGRESS_RETRY_MS = 1000;

export function toActivityFailure(error: unknown): unknown {
  if (error instanceof RateLimitError) {
    return ApplicationFailure.create({
      type: FAILURE_TYPES.rateLimited,
      message: error.message,
      nextRetryDelay: error.retryAfterMs ?? IN_PROGRESS_RETRY_MS,
    });
  }
  if (error instanceof IdempotencyConflictError) {
    return ApplicationFailure.create({
      type: FAILURE_TYPES.inProgress,
      message: error.message,
      nextRetryDelay: IN_PROGRESS_RETRY_MS,
    });
  }
  const permanent = permanentType(error);
  if (permanent) {
    const apiError = error as MessagingApiError | InvalidInputError;
    return ApplicationFailure.create({
      type: permanent,
      message: apiError.message,
      nonRetryable: true,
      // Codes and field paths only: provider messages may echo personal data.
      details: [{ code: 'code' in apiError ? apiError.code : undefined, details: apiError.details }],
    });
  }
  return error;
}

function permanentType(error: unknown): string | undefined {
  if (error instanceof AuthenticationError) return FAILURE_TYPES.authentication;
  if (error instanceof InsufficientBalanceError) return FAILURE_TYPES.insufficientBalance;
  if (error instanceof PermissionDeniedError) return FAILURE_TYPES.permissionDenied;
  if (error instanceof ValidationError) return FAILURE_TYPES.validation;
  if (error instanceof InvalidInputError) return FAILURE_TYPES.invalidInput;
  if (error instanceof NotFoundError) return FAILURE_TYPES.notFound;
  return undefined;
}

/** Runs a provider call, translating its failure into the activity's retry decision. */
export async function callProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toActivityFailure(error);
  }
}
