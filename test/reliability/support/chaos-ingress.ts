/**
 * The real ingress (real verifier, real Temporal signaler) with faults injected at its edge and counters
 * around it: some deliveries are refused with 503 before anything is signalled, some batches are half
 * signalled and then refused (so the provider's retry re-sends events Temporal already has). The sandbox
 * adds its own faults (duplicate deliveries, random hold-backs that reorder them).
 */
import type { Client } from '@temporalio/client';
import { BATCH_EVENT_TYPE, type MessageStatusEvent } from '../../../src/api/events.js';
import { type RunningIngress, startIngress } from '../../../src/ingress/server.js';
import { type StatusSignaler, TemporalUnavailableError, temporalSignaler } from '../../../src/ingress/signaler.js';
import { standardWebhooksVerifier } from '../../../src/ingress/verifier.js';

const BATCH_MARKER = Buffer.from(`"type":"${BATCH_EVENT_TYPE}"`);

export interface IngressFaults {
  /** Probability that a delivery is answered 503 before any of its events is signalled. */
  refuseProbability: number;
  /** Probability that a batch delivery has half its events signalled, then is answered 503. */
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
  partialBatches: number;
  /** Every 4xx/5xx the ingress answered, injected or not. */
  non2xx: number;
  /**
   * 503s the ingress chose itself: Temporal did not acknowledge a signal within its deadline (a loaded
   * server), so the provider is asked to retry. Designed behaviour, counted as an organic fault.
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
  taskQueue: string;
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
    partialBatches: 0,
    non2xx: 0,
    organic503: 0,
    other5xx: 0,
  };
  const real = temporalSignaler({ client: options.temporal, taskQueue: options.taskQueue });
  const accepted = new Set<string>();
  const batchDeliveries = new Set<string>();
  let latestSent = -1;
  const arrived = new Set<string>();
  let injectedPending = 0;

  const signaler: StatusSignaler = {
    async deliver(events: MessageStatusEvent[], deliveryId: string) {
      const { faults } = options;
      const roll = faults.random();
      if (roll < faults.refuseProbability) {
        counters.refused++;
        injectedPending++;
        throw new TemporalUnavailableError('injected fault: refused before signalling');
      }
      if (
        batchDeliveries.has(deliveryId) &&
        events.length > 1 &&
        roll < faults.refuseProbability + faults.partialBatchProbability
      ) {
        counters.partialBatches++;
        injectedPending++;
        await real.deliver(events.slice(0, Math.ceil(events.length / 2)), deliveryId);
        throw new TemporalUnavailableError('injected fault: half the batch signalled');
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
        const order = options.orderOf(event.provider_message_id) ?? -1;
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
    signaler,
    hooks: {
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
  return { ingress, counters, close: () => ingress.close() };
}
