/**
 * Sends one text to one or a few recipients and waits for each message's final delivery state.
 * Large sends are campaigns (`smsCampaign`); this is the per-message workflow a backend service awaits.
 */
import { condition, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createProviderActivities } from '../activities/provider.js';
import type { createSubscriptionActivities } from '../activities/subscriptions.js';
import type { SendSmsInput, SendSmsResult } from '../src/api/workflow-io.js';
import { type MessageOutcome, messageOutcomeSignal } from '../src/definitions/message-status.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { idempotencyKey } from '../src/definitions/workflow-ids.js';
import { MESSAGE_STATUS_DEFAULTS } from './message-status.js';
import { PROVIDER_ACTIVITY_OPTIONS, TEMPORAL_ACTIVITY_OPTIONS } from './options.js';

/** Grace beyond the wait window for the message workflows to ask the provider and report back. */
const REPORT_GRACE_MS = 10 * 60 * 1000;

export async function sendSms(input: SendSmsInput): Promise<SendSmsResult> {
  const outcomes = new Map<string, MessageOutcome>();
  setHandler(messageOutcomeSignal, (outcome) => {
    if (!outcomes.has(outcome.providerMessageId)) outcomes.set(outcome.providerMessageId, outcome);
  });

  const { workflowId, taskQueue } = workflowInfo();
  const provider = proxyActivities<ReturnType<typeof createProviderActivities>>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: providerTaskQueue(taskQueue),
  });
  const subscriptions = proxyActivities<ReturnType<typeof createSubscriptionActivities>>(TEMPORAL_ACTIVITY_OPTIONS);

  const sent = await provider.sendSms(
    { recipients: input.recipients, sender: input.sender, message: input.message },
    idempotencyKey(workflowId, 'send'),
  );
  const ids = sent.messages.map((m) => m.provider_message_id);
  const waitWindowMs = input.waitWindowMs ?? MESSAGE_STATUS_DEFAULTS.waitWindowMs;
  await subscriptions.watchMessages({ providerMessageIds: ids, subscriber: workflowId, waitWindowMs });

  await condition(() => ids.every((id) => outcomes.has(id)), waitWindowMs + REPORT_GRACE_MS);

  return {
    campaignId: sent.campaign_id,
    cost: sent.cost,
    currency: sent.currency,
    messages: sent.messages.map((m) => {
      const outcome = outcomes.get(m.provider_message_id);
      return {
        provider_message_id: m.provider_message_id,
        mobile_number: m.mobile_number,
        status: outcome?.status ?? 'unknown',
        timestamp: outcome?.timestamp ?? null,
        source: outcome?.source ?? 'timeout',
      };
    }),
  };
}
