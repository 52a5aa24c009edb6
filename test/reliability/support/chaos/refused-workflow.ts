/**
 * A workflow whose every signal Temporal refuses, waiting in the message store beside the workload's: the
 * relay must set it aside (a backoff of its own, then its slow lane, shown as refused) and go on telling the
 * others. Temporal refuses it for real: it has used up its signals (`history.maximumSignalsPerExecution`,
 * which the fault run's cluster lowers to SIGNAL_LIMIT so that filling it takes seconds), as a long-lived
 * workflow signalled too often would, and every further signal is an invalid argument.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { MessagingClient } from '../../../../src/client/index.js';
import { SLOW_LANE_AFTER } from '../../../../src/ingress/relay.js';
import type { MessageStore } from '../../../../src/store/index.js';

/** The fault run's signal limit per workflow: a campaign's run continues as new long before it. */
export const SIGNAL_LIMIT = 1_000;

export interface RefusedWorkflow {
  workflowId: string;
  providerMessageId: string;
  /** When it was registered, ms since epoch (its outcome follows within seconds). */
  registeredAt: number;
  /** When the store first showed it in its slow lane (SLOW_LANE_AFTER refusals), ms since epoch; polled. */
  slowLaneAt(): number | undefined;
  stopWatching(): void;
}

/** A number of its own, outside the workload's prefixes. */
const RECIPIENT = '2348090000001';
/** Signals in flight at once while filling the workflow's budget. */
const FILLING_CONCURRENCY = 20;
const WATCH_EVERY_MS = 500;

/**
 * Starts a workflow on a queue no worker polls (it waits forever), signals it up to the limit, then sends one
 * message straight through the provider and registers the workflow as its waiter.
 */
export async function startRefusedWorkflow(
  client: Client,
  messaging: MessagingClient,
  store: Pick<MessageStore, 'register' | 'outbox'>,
): Promise<RefusedWorkflow> {
  const workflowId = `chaos-refused-${randomUUID().slice(0, 8)}`;
  const handle = await client.workflow.start('unpolled', { taskQueue: 'chaos-unpolled', workflowId, args: [] });
  let next = 0;
  const fill = async () => {
    while (next++ < SIGNAL_LIMIT) await handle.signal('fill');
  };
  await Promise.all(Array.from({ length: FILLING_CONCURRENCY }, fill));
  const sent = await messaging.sms.send({ recipients: [RECIPIENT], sender: 'ACME', message: 'refused' });
  const providerMessageId = sent.messages[0]!.provider_message_id;
  await store.register(workflowId, [{ providerMessageId, number: `+${RECIPIENT}` }]);
  const registeredAt = Date.now();
  let slowLaneAt: number | undefined;
  const watcher = setInterval(() => {
    void store.outbox
      .refusal(workflowId)
      .then((refusal) => {
        if (slowLaneAt === undefined && (refusal?.refusals ?? 0) >= SLOW_LANE_AFTER) slowLaneAt = Date.now();
      })
      .catch(() => {}); // the store is faulted too: the next poll reads it
  }, WATCH_EVERY_MS);
  watcher.unref();
  return {
    workflowId,
    providerMessageId,
    registeredAt,
    slowLaneAt: () => slowLaneAt,
    stopWatching: () => clearInterval(watcher),
  };
}
