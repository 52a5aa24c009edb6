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
 * The runs backing `startCampaign` Nexus operations go on a sibling of the workflows' queue, polled by a worker
 * without msgflow's codec: their results reach callers who do not have msgflow's key (docs/nexus.md).
 */
export function nexusCampaignTaskQueue(workflowTaskQueue: string): string {
  return `${workflowTaskQueue}-nexus-campaigns`;
}

/**
 * Task-queue priority for work someone is waiting on (an OTP session, a single `sendSms`): set on the
 * workflow when it starts (its workflow tasks) and on its provider calls. Lower keys go first; campaigns
 * carry none (the default, 3). The provider queue's rate limit still applies to every call: interactive
 * calls take the next free request slots, and campaigns every slot they leave. Server 1.29 (the dev server)
 * honours keys only with `matching.useNewMatcher` on, 1.32's default (docs/temporal.md); without it the
 * queues are first in, first out.
 */
export const INTERACTIVE_PRIORITY = { priorityKey: 1 } as const;

/**
 * The rate (activities per second) the provider queue declares for a token allowing `limitPerMinute` requests
 * in each of the provider's fixed one-minute windows. The Temporal server paces the queue with a token
 * bucket per partition: its rate, plus a burst of one second's worth (at least one task) per partition; and a
 * request dispatched just before a window ends can reach the provider just after it. So the rate leaves room
 * for the bursts and for half a second of dispatch jitter, and no window counts more than the limit (120/min:
 * 117/min declared on one partition).
 */
export function providerQueueRate(limitPerMinute: number, partitions = 1): number {
  const bursts = partitions * Math.max(Math.ceil(limitPerMinute / 60 / partitions), 1);
  const headroomed = (limitPerMinute - bursts) / (60 + DISPATCH_JITTER_SECONDS);
  // Tiny limits cannot leave that room: half the limit keeps them paced, if not guaranteed.
  return Math.max(headroomed, limitPerMinute / 2 / 60);
}

/** How late a dispatched provider request may reach the provider, counted against its one-minute window. */
export const DISPATCH_JITTER_SECONDS = 0.5;
