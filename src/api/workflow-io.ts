/**
 * msgflow's own contract: the inputs and results of its workflows. Backend services in any language start
 * a workflow by type name with this JSON; the starter facade and the CLI validate with these schemas.
 */
import { z } from 'zod';
import { Currency, Id, MinorUnits, PlusNumber, RecipientNumber, SenderId } from './common.js';
import { MessageStatus } from './events.js';
import { MAX_MESSAGE_LENGTH, MAX_SMS_RECIPIENTS } from './constants.js';

const Duration = z
  .number()
  .int()
  .positive()
  .max(30 * 24 * 60 * 60 * 1000);

/** `sendSms`: one text to one or a few recipients, waiting for each message's final state. */
export const SendSmsInput = z.strictObject({
  recipients: z.array(RecipientNumber).min(1).max(MAX_SMS_RECIPIENTS),
  sender: SenderId,
  message: z.string().min(1).max(MAX_MESSAGE_LENGTH),
  /** How long to wait for a final status event before asking the provider (ms). Default 6 h. */
  waitWindowMs: Duration.optional(),
});
export type SendSmsInput = z.infer<typeof SendSmsInput>;

/** `awaitMessage`: waits for the final state of one provider message, whoever sent it. */
export const AwaitMessageInput = z.strictObject({
  providerMessageId: Id,
  /** How long to wait for a final status event before asking the provider (ms). Default 6 h. */
  waitWindowMs: Duration.optional(),
});
export type AwaitMessageInput = z.infer<typeof AwaitMessageInput>;

export const MessageResult = z.object({
  provider_message_id: Id,
  mobile_number: PlusNumber,
  /** The final state; a non-final one (or `unknown`) when none was reached within the wait window. */
  status: z.union([MessageStatus, z.literal('unknown')]),
  timestamp: z.string().nullable(),
  /** How it became known: the webhook event, the provider's record, or neither (timeout). */
  source: z.enum(['webhook', 'provider', 'timeout']),
});
export type MessageResult = z.infer<typeof MessageResult>;

export const SendSmsResult = z.object({
  /** The provider's campaign; null when every recipient was on the suppression list (nothing sent or charged). */
  campaignId: Id.nullable(),
  cost: MinorUnits,
  /** Null when nothing was sent. */
  currency: Currency.nullable(),
  messages: z.array(MessageResult),
  /** Recipients on the suppression list (opted out) when the send was made: not sent to, not charged. */
  suppressed: z.array(PlusNumber).default([]),
  /** Numbers given more than once: each was sent (and charged) once. */
  duplicates: z.array(PlusNumber).default([]),
});
export type SendSmsResult = z.infer<typeof SendSmsResult>;
