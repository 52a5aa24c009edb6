/**
 * How a workflow learns the final state of the messages it sent. The sending activity records the ids in
 * the message store with this workflow as their waiter and returns the outcomes already known; the ingress
 * signals the rest as they arrive, many at once. Whatever is still open when the wait window ends is read
 * from the store once more, then asked of the provider, one request per message on the rate-limited queue.
 */
import { isCancellation, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createMessageStoreActivities } from '../activities/message-store.js';
import type { createProviderActivities } from '../activities/provider.js';
import { isFinalStatus } from '../src/api/constants.js';
import { type MessageOutcome, messageOutcomesSignal } from '../src/definitions/message-outcomes.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { PROVIDER_ACTIVITY_OPTIONS, STORE_ACTIVITY_OPTIONS } from './options.js';
import { BOUNDED_RETRY } from './retry-policies.js';

/** Provider look-ups in flight at once when a wait window ends; the provider queue's rate still paces them. */
const LOOKUPS_IN_FLIGHT = 8;

/** Registers the handler for the ingress's outcome signals. Call it first, before any await. */
export function onMessageOutcomes(handler: (outcomes: MessageOutcome[]) => void): void {
  setHandler(messageOutcomesSignal, handler);
}

function storeActivities() {
  return proxyActivities<ReturnType<typeof createMessageStoreActivities>>(STORE_ACTIVITY_OPTIONS);
}

/** Starts waiting for messages sent by another client (the store answers with those already final). */
export function awaitMessages(providerMessageIds: string[]): Promise<MessageOutcome[]> {
  return storeActivities().awaitMessages({ providerMessageIds });
}

/** The wait window has ended for `ids`: the store's record first, then the provider's, then `timeout`. */
export async function settleOpenMessages(ids: string[]): Promise<MessageOutcome[]> {
  if (ids.length === 0) return [];
  const known = await storeActivities().readOutcomes({ providerMessageIds: ids });
  const settled = new Set(known.map((o) => o.providerMessageId));
  const open = ids.filter((id) => !settled.has(id));
  const asked: MessageOutcome[] = [];
  for (let i = 0; i < open.length; i += LOOKUPS_IN_FLIGHT) {
    asked.push(...(await Promise.all(open.slice(i, i + LOOKUPS_IN_FLIGHT).map(askProvider))));
  }
  return [...known, ...asked];
}

/** This workflow no longer waits for these messages (all of its messages when `ids` is omitted). */
export async function releaseMessages(ids?: string[]): Promise<void> {
  await storeActivities().releaseMessages({ providerMessageIds: ids });
}

async function askProvider(providerMessageId: string): Promise<MessageOutcome> {
  const provider = proxyActivities<ReturnType<typeof createProviderActivities>>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: providerTaskQueue(workflowInfo().taskQueue),
    retry: BOUNDED_RETRY,
  });
  try {
    const record = await provider.getMessageStatus(providerMessageId);
    return isFinalStatus(record.status)
      ? { providerMessageId, status: record.status, timestamp: record.updatedAt, source: 'provider' }
      : { providerMessageId, status: record.status, timestamp: null, source: 'timeout' };
  } catch (error) {
    if (isCancellation(error)) throw error;
    // The provider could not say either (unknown id, outage past the retries): report what we know.
    return { providerMessageId, status: 'unknown', timestamp: null, source: 'timeout' };
  }
}
