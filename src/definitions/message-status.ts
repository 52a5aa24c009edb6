/**
 * How anyone talks to a message's `messageStatus` workflow: its input, its signals and query, and the data
 * they carry. Shared by workflows, activities, the ingress and the starter; nothing here does I/O, so it is
 * safe inside the workflow sandbox.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { FinalStatus, MessageStatus } from '../api/events.js';

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

export interface MessageStatusInput {
  providerMessageId: string;
  /** How long to wait for a final event once a subscriber waits, unless the subscription says otherwise. */
  waitWindowMs?: number;
  /** How long the outcome stays available to late subscribers (and absorbs duplicates) before closing. */
  lingerMs?: number;
  /** How long an event that arrived before any subscriber is kept for its sender. */
  orphanWindowMs?: number;
}

/** The `messageStatus` workflow's signature, for callers that start it by name (signal-with-start). */
export type MessageStatusWorkflow = (input: MessageStatusInput) => Promise<MessageOutcome>;

export const statusEventSignal = defineSignal<[StatusEvent]>('statusEvent');
export const subscribeSignal = defineSignal<[Subscription]>('subscribe');
/** Sent by a message-status workflow to each subscriber once the message's outcome is known. */
export const messageOutcomeSignal = defineSignal<[MessageOutcome]>('messageOutcome');
export const outcomeQuery = defineQuery<MessageOutcome | null>('outcome');
