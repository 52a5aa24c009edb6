/**
 * Task queues. Workflows and ordinary activities share `workflows`; every call to the provider runs on
 * `provider`, whose activity rate limit the server enforces across all workers (the limit is per token).
 */
export const TASK_QUEUES = { workflows: 'msgflow', provider: 'msgflow-provider' } as const;
export type TaskQueueName = (typeof TASK_QUEUES)[keyof typeof TASK_QUEUES];
