/**
 * Workflow ids and task-queue names, derived deterministically so that any process — the ingress, a
 * sender, an operator in the UI — reaches the same workflow from the same business key.
 */

/** Provider calls run on a sibling queue, throttled by the server to the provider's rate limit. */
export function providerTaskQueue(workflowTaskQueue: string): string {
  return `${workflowTaskQueue}-provider`;
}

/** Idempotency key of one charged step: stable across activity retries, worker crashes and continue-as-new. */
export function idempotencyKey(workflowId: string, step: string): string {
  return `${workflowId}/${step}`;
}
