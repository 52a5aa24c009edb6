/**
 * Activities that call the provider. They run on the provider task queue, whose server-enforced rate
 * matches the token's limit, and each charged call carries the idempotency key its workflow derived.
 */
import { Context } from '@temporalio/activity';
import { isFinalStatus } from '../src/api/constants.js';
import type { MessageStatus } from '../src/api/events.js';
import type { SmsSendRequest, SmsSendResult } from '../src/api/sms.js';
import type { MessagingClient } from '../src/client/client.js';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';
import type { MessageStore } from '../src/store/index.js';
import { outcomeFromStore } from '../src/store/outcome.js';
import { callProvider } from './errors.js';
import { callingWorkflowId } from './message-store.js';
import { recordSent } from '../src/tracing/spans.js';

export interface MessageStatusRecord {
  status: MessageStatus;
  updatedAt: string;
}

export interface SentSms {
  sent: SmsSendResult;
  /** Outcomes the store already held when the messages were recorded (their events came first). */
  alreadyFinal: MessageOutcome[];
}

export function createProviderActivities(client: MessagingClient, store: MessageStore) {
  const signal = () => Context.current().cancellationSignal;

  return {
    /** Sends, then records the messages as awaited by the calling workflow before completing. */
    async sendSms(request: SmsSendRequest, idempotencyKey: string): Promise<SentSms> {
      const sent = await callProvider(() => client.sms.send(request, { idempotencyKey, signal: signal() }));
      const traceParent = recordSent(sent.messages.map((m) => m.provider_message_id));
      const known = await store.register(
        callingWorkflowId(),
        sent.messages.map((m) => ({ providerMessageId: m.provider_message_id, number: m.mobile_number, traceParent })),
      );
      return { sent, alreadyFinal: known.map(outcomeFromStore) };
    },

    /**
     * The provider's own record of a message: the fallback when no final event arrived in time. A final
     * answer is recorded in the store (source `provider`, the calling workflow's waiter told), and the state
     * that stands there is returned: a webhook's recorded in the meantime stays first, as workflows keep theirs.
     */
    async getMessageStatus(providerMessageId: string): Promise<MessageStatusRecord> {
      const record = await callProvider(() => client.messages.get(providerMessageId, { signal: signal() }));
      if (!isFinalStatus(record.status)) return { status: record.status, updatedAt: record.updated_at };
      const stands = await store.recordProviderFinal({
        providerMessageId,
        status: record.status,
        timestamp: record.updated_at,
        workflowId: callingWorkflowId(),
      });
      return isFinalStatus(stands.status)
        ? { status: stands.status, updatedAt: stands.timestamp }
        : { status: record.status, updatedAt: record.updated_at };
    },
  };
}
