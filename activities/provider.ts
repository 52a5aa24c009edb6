/**
 * Activities that call the provider. They run on the provider task queue, whose server-enforced rate
 * matches the token's limit, and each charged call carries the idempotency key its workflow derived.
 */
import { Context } from '@temporalio/activity';
import type { MessageStatus } from '../src/api/events.js';
import type { SmsSendRequest, SmsSendResult } from '../src/api/sms.js';
import type { MessagingClient } from '../src/client/client.js';
import { callProvider } from './errors.js';

export interface MessageStatusRecord {
  status: MessageStatus;
  updatedAt: string;
}

export function createProviderActivities(client: MessagingClient) {
  const signal = () => Context.current().cancellationSignal;

  return {
    async sendSms(request: SmsSendRequest, idempotencyKey: string): Promise<SmsSendResult> {
      return callProvider(() => client.sms.send(request, { idempotencyKey, signal: signal() }));
    },

    /** The provider's own record of a message: the fallback when no final event arrived in time. */
    async getMessageStatus(providerMessageId: string): Promise<MessageStatusRecord> {
      const record = await callProvider(() => client.messages.get(providerMessageId, { signal: signal() }));
      return { status: record.status, updatedAt: record.updated_at };
    },
  };
}
