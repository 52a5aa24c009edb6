/**
 * The real ingress (real verifier, real message store, real outcome router, its relay signalling Temporal)
 * with faults injected between its parsing and its router, and counters around it. Each fault ends in a
 * 503, so the provider redelivers the whole body later:
 * - refused: nothing recorded, nothing told;
 * - unsignalled: every event recorded in the store, then the process "dies" before telling: the relay is not
 *   woken and the delivery is not acknowledged (the relay's sweep finds the untold outcomes);
 * - partial batch: half a batch recorded (and its relay woken), then refused (the retry re-sends events msgflow has).
 * The sandbox adds its own faults (duplicate deliveries, random hold-backs that reorder them).
 */
import type { Client } from '@temporalio/client';
import { BATCH_EVENT_TYPE, type MessageStatusEvent } from '../../../src/api/events.js';
import { type OutcomeRouter, outcomeRouter, StoreUnavailableError } from '../../../src/ingress/outcome-router.js';
import { startRelay } from '../../../src/ingress/relay.js';
import { type RunningIngress, startIngress } from '../../../src/ingress/server.js';
import { standardWebhooksVerifier } from '../../../src/ingress/verifier.js';
import type { MessageStore } from '../../../src/store/index.js';

const BATCH_MARKER = Buffer.from(`"type":"${BATCH_EVENT_TYPE}"`);

export interface IngressFaults {
  /** Probability that a delivery is answered 503 before any of its events is recorded. */
  refuseProbability: number;
  /** Probability that a delivery's events are all recorded in the store, its relay not woken, and it is answered 503. */
  unsignalledProbability: number;
  /** Probability that a batch delivery has half its events recorded, then is answered 503. */
  partialBatchProbability: number;
  random: () => number;
}

export interface ChaosCounters {
  /** Bodies accepted (2xx), by kind: a plain event, or message.status.batch. */
  singleBodies: number;
  batchBodies: number;
  /** Events in accepted bodies (an event can arrive several times). */
  eventsAccepted: number;
  /** Accepted deliveries whose webhook-id had already been accepted: the sandbox's duplicates. */
  duplicateDeliveries: number;
  /** Messages whose first event arrived after an event of a later-sent message: reordering. */
  reorderedEvents: number;
  refused: number;
  unsignalled: number;
  partialBatches: number;
  /** Authentic events the ingress found invalid (none expected: the sandbox sends valid ones). */
  rejectedEvents: number;
  /** Every 4xx/5xx the ingress answered, injected or not. */
  non2xx: number;
  /**
   * 503s the ingress chose itself: the store or Temporal did not answer in time (a loaded machine), so the
   * provider is asked to retry. Designed behaviour, counted as an organic fault.
   */
  organic503: number;
  /** Any other 5xx: a real fault of the ingress. */
  other5xx: number;
}

export interface ChaosIngress {
  ingress: RunningIngress;
  counters: ChaosCounters;
  close(): Promise<void>;
}

export interface ChaosIngressOptions {
  temporal: Client;
  store: MessageStore;
  /** Accepted signing secrets, read per delivery (endpoints registered later add theirs). */
  secrets: () => string[];
  faults: IngressFaults;
  /** Send order of a message (its index), to count events that overtook others; undefined if unknown. */
  orderOf: (providerMessageId: string) => number | undefined;
}

export async function startChaosIngress(options: ChaosIngressOptions): Promise<ChaosIngress> {
  const counters: ChaosCounters = {
    singleBodies: 0,
    batchBodies: 0,
    eventsAccepted: 0,
    duplicateDeliveries: 0,
    reorderedEvents: 0,
    refused: 0,
    unsignalled: 0,
    partialBatches: 0,
    rejectedEvents: 0,
    non2xx: 0,
    organic503: 0,
    other5xx: 0,
  };
  const { store } = options;
  const relay = startRelay({ store, client: options.temporal });
  const real = outcomeRouter({ store, relay });
  const accepted = new Set<string>();
  const batchDeliveries = new Set<string>();
  let latestSent = -1;
  const arrived = new Set<string>();
  let injectedPending = 0;

  const router: OutcomeRouter = {
    async deliver(events: MessageStatusEvent[], deliveryId: string) {
      const { faults } = options;
      const roll = faults.random();
      let threshold = faults.refuseProbability;
      if (roll < threshold) {
        counters.refused++;
        injectedPending++;
        throw new StoreUnavailableError('injected fault: refused before recording');
      }
      threshold += faults.unsignalledProbability;
      if (roll < threshold) {
        counters.unsignalled++;
        injectedPending++;
        await store.recordEvents(
          events.map((e) => ({
            providerMessageId: e.provider_message_id,
            status: e.status,
            timestamp: e.timestamp,
            eventId: deliveryId,
          })),
        );
        throw new StoreUnavailableError('injected fault: recorded, then died before telling');
      }
      threshold += faults.partialBatchProbability;
      if (batchDeliveries.has(deliveryId) && events.length > 1 && roll < threshold) {
        counters.partialBatches++;
        injectedPending++;
        await real.deliver(events.slice(0, Math.ceil(events.length / 2)), deliveryId);
        throw new StoreUnavailableError('injected fault: half the batch recorded');
      }
      await real.deliver(events, deliveryId);
      if (accepted.has(deliveryId)) counters.duplicateDeliveries++;
      accepted.add(deliveryId);
      if (batchDeliveries.has(deliveryId)) counters.batchBodies++;
      else counters.singleBodies++;
      counters.eventsAccepted += events.length;
      for (const event of events) {
        if (arrived.has(event.provider_message_id)) continue;
        arrived.add(event.provider_message_id);
        const order = options.orderOf(event.provider_message_id);
        if (order === undefined) continue;
        if (order < latestSent) counters.reorderedEvents++;
        else latestSent = order;
      }
    },
  };

  const ingress = await startIngress({
    verifier: {
      verify: (headers, body) => {
        const verdict = standardWebhooksVerifier(options.secrets()).verify(headers, body);
        if (verdict.ok && body.includes(BATCH_MARKER)) batchDeliveries.add(verdict.id);
        return verdict;
      },
    },
    router,
    hooks: {
      onRejectedEvents: (count) => (counters.rejectedEvents += count),
      onDelivery: ({ status }) => {
        if (status < 300) return;
        counters.non2xx++;
        if (status === 503) {
          if (injectedPending > 0) injectedPending--;
          else counters.organic503++;
        } else if (status >= 500) {
          counters.other5xx++;
        }
      },
    },
  });
  return { ingress, counters, close: () => ingress.close().finally(() => relay.close()) };
}
