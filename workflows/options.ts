/** Activity options shared by the workflows. */
import type { ActivityOptions } from '@temporalio/workflow';

/**
 * Provider calls: retried without an attempt limit, because every retryable cause (5xx, network, 429,
 * 409 in progress) is transient and each charged call carries a deterministic idempotency key. Causes
 * that no retry can fix (401/402/403/422) are non-retryable failures raised by the activities.
 */
export const PROVIDER_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
} satisfies ActivityOptions;

/**
 * Calls to msgflow's message store. Retried without a limit: a store that is down (a database restart)
 * comes back, and every call is idempotent.
 */
export const STORE_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} satisfies ActivityOptions;
