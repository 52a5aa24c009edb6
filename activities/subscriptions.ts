/** Activities that talk to Temporal itself: subscribing a workflow to the outcome of its messages. */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { signalMessageWorkflow } from '../src/temporal/message-signals.js';
import { subscribeSignal } from '../src/definitions/message-status.js';

/** Signal-with-start calls in flight at once: enough to be quick, few enough to be gentle on the server. */
const CONCURRENCY = 20;

export interface WatchMessagesInput {
  providerMessageIds: string[];
  /** The workflow that wants each message's outcome (signalled `messageOutcome`). */
  subscriber: string;
  waitWindowMs?: number;
}

export function createSubscriptionActivities(temporal: Client) {
  return {
    /** Subscribes `subscriber` to each message's workflow, creating the ones no event has created yet. */
    async watchMessages({ providerMessageIds, subscriber, waitWindowMs }: WatchMessagesInput): Promise<void> {
      const { taskQueue } = Context.current().info;
      let next = 0;
      const worker = async () => {
        while (next < providerMessageIds.length) {
          const id = providerMessageIds[next++]!;
          await signalMessageWorkflow(temporal, taskQueue, id, subscribeSignal, {
            workflowId: subscriber,
            waitWindowMs,
          });
          Context.current().heartbeat(next);
        }
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, providerMessageIds.length) }, worker));
    },
  };
}
