/**
 * Why a workflow (or one attempt of its activity) failed, as the facade and the CLI report it: the root
 * cause under Temporal's wrappers (workflow failed → activity failed → the activity's own error), decoded.
 */
import { z } from 'zod';

/** How it ended: an error, a timeout, a cancellation, or an operator's terminate. */
export const FAILURE_STATUSES = ['failed', 'timed-out', 'cancelled', 'terminated'] as const;
export const FailureStatus = z.enum(FAILURE_STATUSES);
export type FailureStatus = z.infer<typeof FailureStatus>;

export const FailureReason = z.object({
  status: FailureStatus,
  /**
   * The most precise name of the cause: the provider's error code when the provider refused (e.g.
   * `sender_not_approved`), otherwise `type`.
   */
  kind: z.string(),
  /** The root cause's failure type, e.g. `ProviderValidationFailed`, `AudienceUnavailable`; `Timeout`, `Cancelled`, `Terminated`. */
  type: z.string(),
  message: z.string(),
  /** Marked as a cause no retry fixes (a refusal, an unreadable audience), rather than a transient one. */
  nonRetryable: z.boolean(),
});
export type FailureReason = z.infer<typeof FailureReason>;

/** An activity being retried: which, the attempt it is on, and why the last one failed. */
export const ActivityRetry = z.object({
  activity: z.string(),
  attempt: z.number().int().positive(),
  lastFailure: FailureReason.nullable(),
  /** When the next attempt starts (ISO 8601), when known. */
  nextAttemptAt: z.string().nullable(),
});
export type ActivityRetry = z.infer<typeof ActivityRetry>;
