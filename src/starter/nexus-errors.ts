/**
 * How the `msgflow` Nexus service's handlers answer a failure: bad input is a non-retryable BAD_REQUEST naming
 * each field, the facade's typed refusals are failed operations of the same type with their reason in details,
 * a failed workflow is a failed operation with its cause; anything else is left to the SDK (retried).
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import * as nexus from 'nexus-rpc';
import { OtpBlockedError, OtpRateLimitedError, OtpSendFailedError, OtpVerificationUnavailableError } from './otp.js';
import { KeyReusedError } from './start-once.js';
import { InvalidWorkflowInputError } from './validate.js';

/** The facade's answer, or its error as the caller should see it: bad input, a typed refusal, or a retry. */
export async function answering<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw nexusErrorOf(error);
  }
}

export function nexusErrorOf(error: unknown): unknown {
  if (error instanceof InvalidWorkflowInputError)
    // BAD_REQUEST is never retried: the message names each offending field.
    return new nexus.HandlerError('BAD_REQUEST', error.message, { cause: error });
  if (error instanceof OtpVerificationUnavailableError)
    return new nexus.HandlerError('UNAVAILABLE', error.message, { cause: error });
  const refusal = refusalOf(error);
  if (refusal) return new nexus.OperationError('failed', refusal.message, { cause: refusal });
  if (error instanceof WorkflowFailedError)
    return new nexus.OperationError('failed', error.cause?.message ?? error.message, { cause: error.cause });
  return error;
}

/** The facade's typed refusals, as a non-retryable failure of the same type with its reason in details. */
function refusalOf(error: unknown): ApplicationFailure | undefined {
  const refusal = (details: unknown[]) =>
    ApplicationFailure.create({
      type: (error as Error).name,
      message: (error as Error).message,
      nonRetryable: true,
      details,
    });
  if (error instanceof OtpSendFailedError) return refusal([{ failureType: error.failureType }]);
  if (error instanceof OtpRateLimitedError) return refusal([{ retryAfterSeconds: error.retryAfterSeconds }]);
  if (error instanceof KeyReusedError) return refusal([{ key: error.key }]);
  if (error instanceof OtpBlockedError)
    return refusal([{ reason: error.reason, retryAfterSeconds: error.retryAfterSeconds }]);
  return undefined;
}
