/**
 * Why a workflow failed, from the error its result rejected with: Temporal wraps the cause
 * (WorkflowFailedError → ActivityFailure → ApplicationFailure), and the cause is what a caller needs. The
 * client's data converter has already decoded the messages (they travel encrypted), so this only unwraps.
 */
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import {
  ApplicationFailure,
  CancelledFailure,
  TemporalFailure,
  TerminatedFailure,
  TimeoutFailure,
} from '@temporalio/common';
import type { FailureReason, FailureStatus } from '../api/failure-reason.js';

/** Failure types that name no cause: an error that was not a typed failure (a plain `Error` thrown). */
const UNTYPED = new Set(['Error', '']);

/** The innermost cause of `error` among Temporal's failures (itself when it wraps none). */
export function rootCause(error: unknown): unknown {
  let current = error;
  while (current instanceof Error && isWrapper(current) && current.cause instanceof Error) current = current.cause;
  return current;
}

function isWrapper(error: Error): boolean {
  return (
    error instanceof WorkflowFailedError ||
    error instanceof WorkflowUpdateFailedError ||
    error instanceof TemporalFailure
  );
}

/**
 * The reason a workflow failed, or undefined when `error` is not a workflow's failure (e.g. Temporal could
 * not be reached): its root cause's status, kind, type and message.
 */
export function explainFailure(error: unknown): FailureReason | undefined {
  if (!(error instanceof TemporalFailure || error instanceof WorkflowFailedError)) return undefined;
  return reasonOf(rootCause(error) as Error);
}

/** The reason of one failure already unwrapped (e.g. an activity attempt's last failure). */
export function reasonOf(cause: Error): FailureReason {
  const status = statusOf(cause);
  const type = typeOf(cause, status);
  const message = cause.message || type;
  const nonRetryable = cause instanceof ApplicationFailure && cause.nonRetryable === true;
  return { status, kind: providerCode(cause) ?? type, type, message, nonRetryable };
}

function statusOf(cause: Error): FailureStatus {
  if (cause instanceof TimeoutFailure) return 'timed-out';
  if (cause instanceof CancelledFailure) return 'cancelled';
  if (cause instanceof TerminatedFailure) return 'terminated';
  return 'failed';
}

function typeOf(cause: Error, status: FailureStatus): string {
  if (cause instanceof ApplicationFailure) return cause.type || 'Error';
  if (status === 'timed-out') return 'Timeout';
  if (status === 'cancelled') return 'Cancelled';
  if (status === 'terminated') return 'Terminated';
  return cause.name || 'Error';
}

/** The provider's error code a provider activity put in its failure's details (activities/errors.ts). */
function providerCode(cause: Error): string | undefined {
  if (!(cause instanceof ApplicationFailure)) return undefined;
  const first = cause.details?.[0];
  const code = typeof first === 'object' && first !== null ? (first as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

/** A failure no retry fixes and that names its cause: a refusal (the provider's, an audience's), not a crash. */
export function isRefusal(reason: FailureReason): boolean {
  return reason.status === 'failed' && reason.nonRetryable && !UNTYPED.has(reason.type);
}
