/**
 * How a workflow hears the final state of the messages it sent: the outcome, and the signal the ingress
 * sends it. Shared by workflows, activities and the ingress; nothing here does I/O, so it is safe inside the
 * workflow sandbox.
 */
import { defineSignal } from '@temporalio/workflow';
import type { MessageStatus } from '../api/events.js';

/** How a final state became known. `timeout`: no final state by the end of the wait window. */
export type OutcomeSource = 'webhook' | 'provider' | 'timeout';

export interface MessageOutcome {
  providerMessageId: string;
  /** A final status, or the last known non-final one when `source` is `timeout`. */
  status: MessageStatus | 'unknown';
  timestamp: string | null;
  source: OutcomeSource;
}

/**
 * Sent by the ingress's relay to a workflow waiting for its messages: every outcome the store holds for it and
 * has not told it yet, many at once. A duplicate or a later conflicting outcome is ignored by
 * the receiver, which keeps the first it saw for each id.
 */
export const messageOutcomesSignal = defineSignal<[MessageOutcome[]]>('messageOutcomes');
