/**
 * The shape of an OTP session with nothing of msgflow in it: a workflow whose `call` update runs one
 * no-op activity and answers with its result. The OTP bench measures it to show what Temporal's round trips
 * cost on the machine, apart from what msgflow adds.
 */
import {
  allHandlersFinished,
  condition,
  defineUpdate,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';

/** Where the update's activity runs: on a sibling task queue (as msgflow's provider calls), or in the workflow task. */
export type FloorActivityMode = 'queued' | 'local';

export const callUpdate = defineUpdate<string, [string]>('call');

type FloorActivities = { echo(value: string): Promise<string> };

/** Answers two `call` updates (as a session answers `send`, then `verify`) and ends. */
export async function floorRoundTrip(mode: FloorActivityMode): Promise<void> {
  const activities =
    mode === 'local'
      ? proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' })
      : proxyActivities<FloorActivities>({
          taskQueue: floorActivityQueue(workflowInfo().taskQueue),
          startToCloseTimeout: '10 seconds',
        });
  let calls = 0;
  setHandler(callUpdate, (value) => {
    calls += 1;
    return activities.echo(value);
  });
  await condition(() => calls >= 2);
  await condition(allHandlersFinished);
}

export function floorActivityQueue(workflowQueue: string): string {
  return `${workflowQueue}-activities`;
}
