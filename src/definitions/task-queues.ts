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
