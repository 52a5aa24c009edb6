/**
 * Turns verified status events into Temporal signals. A body is acknowledged only once Temporal accepted
 * every one of its signals; when Temporal cannot be reached the caller answers 503 so the provider
 * redelivers (its retries are the buffer, not our memory).
 */
import type { Client } from '@temporalio/client';
import type { MessageStatusEvent } from '../api/events.js';
import { signalMessageWorkflow } from '../temporal/message-signals.js';
import { statusEventSignal } from '../definitions/message-status.js';

export interface StatusSignaler {
  /** Resolves once Temporal accepted a signal for every event; rejects with TemporalUnavailableError otherwise. */
  deliver(events: MessageStatusEvent[], deliveryId: string): Promise<void>;
}

export class TemporalUnavailableError extends Error {
  override name = 'TemporalUnavailableError';
}

export interface TemporalSignalerOptions {
  client: Client;
  /** The workflows' task queue, where a message workflow started by an event runs. */
  taskQueue: string;
  /**
   * Deadline of each signal call, so a down server turns into a prompt 503 instead of a hung request: all
   * attempts together stay well under the usual webhook timeout of providers (about 10 s).
   */
  callTimeoutMs?: number;
  /** Short retries, for a workflow that is busy closing (BUSY_WORKFLOW) or a network blip. */
  attempts?: number;
}

export function temporalSignaler({
  client,
  taskQueue,
  callTimeoutMs = 2000,
  attempts = 2,
}: TemporalSignalerOptions): StatusSignaler {
  const signalOne = async (event: MessageStatusEvent, deliveryId: string) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.withDeadline(Date.now() + callTimeoutMs, () =>
          signalMessageWorkflow(client, taskQueue, event.provider_message_id, statusEventSignal, {
            status: event.status,
            timestamp: event.timestamp,
            eventId: deliveryId,
          }),
        );
        return;
      } catch (error) {
        if (attempt >= attempts) {
          throw new TemporalUnavailableError(`Temporal did not accept the signal: ${describe(error)}`, {
            cause: error,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
      }
    }
  };
  return {
    async deliver(events, deliveryId) {
      await Promise.all(events.map((event) => signalOne(event, deliveryId)));
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
