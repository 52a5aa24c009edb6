/**
 * One workflow per provider message, with an id derived from its provider_message_id. The ingress (with a
 * status event) and the sender (with a subscription) both reach it by signal-with-start, so whichever comes
 * first creates it and nothing is lost: an early event waits for its subscriber, a duplicate or a later
 * conflicting event is ignored (the first final state wins), and each subscriber is told the outcome once.
 */
import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { isFinalStatus } from '../src/api/constants.js';
import type { createProviderActivities } from '../activities/provider.js';
import { SA } from '../src/definitions/search-attributes.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { campaignKeyOf } from '../src/definitions/workflow-ids.js';
import {
  type MessageOutcome,
  messageOutcomeSignal,
  type MessageStatusInput,
  outcomeQuery,
  type StatusEvent,
  statusEventSignal,
  type Subscription,
  subscribeSignal,
} from '../src/definitions/message-status.js';
import { countMessageOutcome } from './metrics.js';
import { PROVIDER_ACTIVITY_OPTIONS } from './options.js';

export const MESSAGE_STATUS_DEFAULTS = {
  waitWindowMs: 6 * 60 * 60 * 1000,
  lingerMs: 10 * 60 * 1000,
  orphanWindowMs: 60 * 60 * 1000,
} as const;

export async function messageStatus(input: MessageStatusInput): Promise<MessageOutcome> {
  const { providerMessageId } = input;
  const { waitWindowMs, lingerMs, orphanWindowMs } = { ...MESSAGE_STATUS_DEFAULTS, ...definedOnly(input) };
  const subscribers: Subscription[] = [];
  const notified = new Set<string>();
  let event: StatusEvent | undefined;
  let outcome: MessageOutcome | null = null;

  // Handlers first, synchronously: the signal that started this run is delivered as soon as they exist.
  setHandler(statusEventSignal, (e) => {
    if (!event && isFinalStatus(e.status)) event = e;
  });
  setHandler(subscribeSignal, (s) => {
    if (!subscribers.some((known) => known.workflowId === s.workflowId)) subscribers.push(s);
    // A campaign's messages carry its key, so operators find e.g. its undelivered ones in the UI, whoever
    // (event or sender) created this workflow.
    const campaignKey = campaignKeyOf(s.workflowId); // the id itself when the subscriber is no campaign
    if (campaignKey !== s.workflowId && !workflowInfo().typedSearchAttributes.get(SA.campaignKey)) {
      upsertSearchAttributes([{ key: SA.campaignKey, value: campaignKey }]);
    }
  });
  setHandler(outcomeQuery, () => outcome);

  await condition(() => event !== undefined || subscribers.length > 0);

  if (!event) {
    const window = subscribers[0]?.waitWindowMs ?? waitWindowMs;
    await condition(() => event !== undefined, window);
  }
  outcome = event
    ? { providerMessageId, status: event.status, timestamp: event.timestamp, source: 'webhook' }
    : await askProvider(providerMessageId);
  upsertSearchAttributes([{ key: SA.finalStatus, value: outcome.status }]);
  countMessageOutcome(outcome);

  // Tell every subscriber, including those that arrive while the outcome is kept.
  const pending = () => subscribers.filter((s) => !notified.has(s.workflowId));
  const keepUntil = Date.now() + (subscribers.length > 0 ? lingerMs : orphanWindowMs);
  for (;;) {
    for (const subscriber of pending()) {
      notified.add(subscriber.workflowId);
      await notify(subscriber.workflowId, outcome);
    }
    const remaining = keepUntil - Date.now();
    if (remaining <= 0 || !(await condition(() => pending().length > 0, remaining))) break;
  }
  await condition(allHandlersFinished);
  return outcome;
}

/** No final event within the window: the provider's own record decides before we call it a timeout. */
async function askProvider(providerMessageId: string): Promise<MessageOutcome> {
  const provider = proxyActivities<ReturnType<typeof createProviderActivities>>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: providerTaskQueue(workflowInfo().taskQueue),
    retry: { ...PROVIDER_ACTIVITY_OPTIONS.retry, maximumAttempts: 10 },
  });
  try {
    const record = await provider.getMessageStatus(providerMessageId);
    return isFinalStatus(record.status)
      ? { providerMessageId, status: record.status, timestamp: record.updatedAt, source: 'provider' }
      : { providerMessageId, status: record.status, timestamp: null, source: 'timeout' };
  } catch {
    // The provider could not say either (unknown id, outage past the retries): report what we know.
    return { providerMessageId, status: 'unknown', timestamp: null, source: 'timeout' };
  }
}

async function notify(workflowId: string, outcome: MessageOutcome): Promise<void> {
  try {
    await getExternalWorkflowHandle(workflowId).signal(messageOutcomeSignal, outcome);
  } catch {
    // The subscriber has closed (completed, cancelled or terminated): nobody is left to tell.
  }
}

function definedOnly<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
