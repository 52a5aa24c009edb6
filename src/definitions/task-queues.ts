/**
 * Task queues. Workflows and ordinary activities share `workflows`; every call to the provider runs on
 * `provider`, whose activity rate limit the server enforces across all workers (the limit is per token).
 */
export const TASK_QUEUES = { workflows: 'msgflow', provider: 'msgflow-provider' } as const;
export type TaskQueueName = (typeof TASK_QUEUES)[keyof typeof TASK_QUEUES];

/** Provider calls run on a sibling of the workflows' queue, throttled by the server to the provider's rate limit. */
export function providerTaskQueue(workflowTaskQueue: string): string {
  return `${workflowTaskQueue}-provider`;
}

/**
 * Task-queue priority for work someone is waiting on (an OTP session, a single `sendSms`): set on the
 * workflow when it starts (its workflow tasks) and on its provider calls. Lower keys go first; campaigns
 * carry none (the default, 3). The provider queue's rate limit still applies to every call: interactive
 * calls take the next free request slots, and campaigns every slot they leave. Server 1.29 honours keys
 * only with `matching.useNewMatcher` on (docs/temporal.md); without it the queues are first in, first out.
 */
export const INTERACTIVE_PRIORITY = { priorityKey: 1 } as const;
