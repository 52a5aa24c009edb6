/**
 * Records verified status events in the message store (deliveries that arrive together share one
 * transaction) and wakes the relay for the workflows waiting for them. A body is acknowledged once the store
 * holds its events: telling the workflows is the relay's job (relay.ts), from the store, so a Temporal
 * outage costs no delivery. Only a store that cannot be reached makes the caller answer 503.
 */
import type { MessageStatusEvent, RejectedEvent } from '../api/events.js';
import type { MessageStore, StatusEventRecord, WaiterOutcomes } from '../store/index.js';
import { GroupCommit } from './group-commit.js';
import type { Relay } from './relay.js';
import { inSpan } from '../tracing/spans.js';

export interface OutcomeRouter {
  /** Resolves once every event and every rejected event (authentic but invalid, kept for an operator) is recorded. */
  deliver(events: MessageStatusEvent[], deliveryId: string, rejected?: RejectedEvent[]): Promise<void>;
}

/** How long a delivery waits by default for others to share its store transaction. */
const DEFAULT_GROUP_COMMIT_MS = 2;

export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

export interface OutcomeRouterOptions {
  store: MessageStore;
  /** Told which workflows have new untold outcomes; the store holds them either way. */
  relay: Pick<Relay, 'wake'>;
  /** How long a delivery waits for others to share its store transaction (default 2 ms). */
  groupCommitMs?: number;
}

export function outcomeRouter({
  store,
  relay,
  groupCommitMs = DEFAULT_GROUP_COMMIT_MS,
}: OutcomeRouterOptions): OutcomeRouter {
  const writer = new GroupCommit(store, groupCommitMs);
  async function record(
    events: MessageStatusEvent[],
    deliveryId: string,
    rejected: RejectedEvent[],
  ): Promise<WaiterOutcomes[]> {
    try {
      for (const r of rejected) await store.recordRejected(r.reason, r.event);
      return await writer.record(statusEventRecords(events, deliveryId));
    } catch (error) {
      throw new StoreUnavailableError(`the message store did not record the delivery: ${describe(error)}`, {
        cause: error,
      });
    }
  }

  return {
    async deliver(events, deliveryId, rejected = []) {
      const waiting = await inSpan('msgflow.ingress.record', { attributes: { 'msgflow.events': events.length } }, () =>
        record(events, deliveryId, rejected),
      );
      if (waiting.length > 0) relay.wake(waiting);
    },
  };
}

/** A delivery's events as the store records them. */
export function statusEventRecords(events: readonly MessageStatusEvent[], deliveryId: string): StatusEventRecord[] {
  return events.map((e) => ({
    providerMessageId: e.provider_message_id,
    status: e.status,
    timestamp: e.timestamp,
    eventId: deliveryId,
  }));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
