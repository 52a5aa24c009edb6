/**
 * Signals, queries and the data they carry. Shared by workflows, activities, the ingress and the starter;
 * nothing here does I/O, so it is safe inside the workflow sandbox.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { FinalStatus, MessageStatus } from '../src/api/events.js';

/** A final status reported by the provider's webhook. No phone number travels with it: it is not needed. */
export interface StatusEvent {
  status: FinalStatus;
  /** When the provider says the state was reached (ISO 8601). */
  timestamp: string;
  /** The delivery id (`webhook-id`), for tracing. */
  eventId?: string;
}

/** A workflow that wants the final state of a message, and how long it is willing to wait for an event. */
export interface Subscription {
  workflowId: string;
  waitWindowMs?: number;
}

/** How a final state became known. `timeout`: no final state by the end of the wait window. */
export type OutcomeSource = 'webhook' | 'provider' | 'timeout';

export interface MessageOutcome {
  providerMessageId: string;
  /** A final status, or the last known non-final one when `source` is `timeout`. */
  status: MessageStatus | 'unknown';
  timestamp: string | null;
  source: OutcomeSource;
}

export const statusEventSignal = defineSignal<[StatusEvent]>('statusEvent');
export const subscribeSignal = defineSignal<[Subscription]>('subscribe');
/** Sent by a message-status workflow to each subscriber once the message's outcome is known. */
export const messageOutcomeSignal = defineSignal<[MessageOutcome]>('messageOutcome');
export const outcomeQuery = defineQuery<MessageOutcome | null>('outcome');
