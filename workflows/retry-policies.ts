/**
 * How the workflows retry their activities: every activity retry policy, named for what it retries, with
 * why it is shaped so. Plain objects (workflow-sandbox safe); the values are part of recorded histories, so
 * changing one changes what new workflows schedule, never what a replay expects.
 * The HTTP client's own retry of one provider call (which statuses, how long a `Retry-After` may ask) is
 * src/client/retry-policy.ts: an activity attempt is one client call with its retries.
 */
import type { RetryPolicy } from '@temporalio/workflow';

/**
 * Errors an activity raises for an input no retry can fix (the message store's StoreInputError: a malformed
 * number, field or cursor): they fail the activity at once instead of being retried forever.
 */
const INPUT_ERRORS = ['StoreInputError'];

/**
 * Provider calls: retried without an attempt limit, because every retryable cause (5xx, network, 429,
 * 409 in progress) is transient and each charged call carries a deterministic idempotency key. Causes
 * that no retry can fix (401/402/403/422) are non-retryable failures raised by the activities.
 */
export const PROVIDER_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  nonRetryableErrorTypes: INPUT_ERRORS,
} as const satisfies RetryPolicy;

/**
 * Calls to msgflow's message store. Retried without a limit: a store that is down (a database restart)
 * comes back, and every call is idempotent. A store is near: a shorter longest wait than the provider's.
 */
export const STORE_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  nonRetryableErrorTypes: INPUT_ERRORS,
} as const satisfies RetryPolicy;

/**
 * Reads that have an answer without them: the provider's pace, but ten attempts, after which the caller
 * goes on with what it knows (a campaign's audience source that stays broken fails the campaign; a
 * message's status lookup reports the message as unknown).
 */
export const BOUNDED_RETRY = { ...PROVIDER_RETRY, maximumAttempts: 10 } as const satisfies RetryPolicy;

/** One more look at a call past its deadline: three quick tries, then the last snapshot seen stands. */
export const LAST_LOOK_RETRY = { ...PROVIDER_RETRY, maximumAttempts: 3 } as const satisfies RetryPolicy;

/**
 * An OTP check: the caller waits synchronously, so a few quick tries, then an answer ("unavailable")
 * rather than a hang.
 */
export const OTP_VERIFY_RETRY = {
  initialInterval: '200 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '2 seconds',
  maximumAttempts: 5,
} as const satisfies RetryPolicy;

/**
 * A voice call's polling schedule: each "not final yet" is a failed attempt, retried on this backoff until
 * the activity's deadline (its schedule-to-close timeout) bounds it.
 */
export function pollingRetry(initialMs: number, maxMs: number): RetryPolicy {
  return { initialInterval: initialMs, backoffCoefficient: 2, maximumInterval: Math.max(initialMs, maxMs) };
}
