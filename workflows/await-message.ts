/**
 * Waits for the final state of one provider message, whoever sent it: for backend services that send
 * through their own client and want a durable wait, and for operators re-checking a message.
 */
import { condition, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createSubscriptionActivities } from '../activities/subscriptions.js';
import { type MessageOutcome, messageOutcomeSignal } from '../src/definitions/message-status.js';
import { MESSAGE_STATUS_DEFAULTS } from './message-status.js';
import { TEMPORAL_ACTIVITY_OPTIONS } from './options.js';

export interface AwaitMessageInput {
  providerMessageId: string;
  /** How long to wait for a final status event before asking the provider (ms). */
  waitWindowMs?: number;
}

export async function awaitMessage({ providerMessageId, waitWindowMs }: AwaitMessageInput): Promise<MessageOutcome> {
  let outcome: MessageOutcome | undefined;
  setHandler(messageOutcomeSignal, (o) => {
    if (o.providerMessageId === providerMessageId) outcome ??= o;
  });
  const subscriptions = proxyActivities<ReturnType<typeof createSubscriptionActivities>>(TEMPORAL_ACTIVITY_OPTIONS);
  await subscriptions.watchMessages({
    providerMessageIds: [providerMessageId],
    subscriber: workflowInfo().workflowId,
    waitWindowMs: waitWindowMs ?? MESSAGE_STATUS_DEFAULTS.waitWindowMs,
  });
  await condition(() => outcome !== undefined);
  return outcome!;
}
