/** SMS sends, and the message and campaign records the reports endpoints return. */
import { z } from 'zod';
import { Currency, Id, MinorUnits, OffsetDateTime, PlusNumber, RecipientNumber, SenderId } from './common.js';
import { MessageStatus } from './events.js';
import { MAX_MESSAGE_LENGTH, MAX_RECIPIENTS_PER_REQUEST } from './constants.js';

export const SmsSendRequest = z
  .strictObject({
    recipients: z.array(RecipientNumber).min(1).max(MAX_RECIPIENTS_PER_REQUEST),
    sender: SenderId,
    message: z.string().min(1).max(MAX_MESSAGE_LENGTH),
  })
  .meta({ id: 'SmsSendRequest' });
export type SmsSendRequest = z.infer<typeof SmsSendRequest>;

export const SentMessage = z.looseObject({
  provider_message_id: Id,
  mobile_number: PlusNumber,
  status: MessageStatus,
});
export type SentMessage = z.infer<typeof SentMessage>;

/** 202 payload of POST /sms/send: the queued campaign, its cost, and one entry per recipient. */
export const SmsSendResult = z
  .looseObject({
    campaign_id: Id,
    status: z.literal('queued'),
    segments: z.number().int().positive().meta({ description: 'Segments per recipient' }),
    encoding: z.enum(['GSM-7', 'UCS-2']),
    cost: MinorUnits,
    currency: Currency,
    messages: z.array(SentMessage),
  })
  .meta({ id: 'SmsSendResult' });
export type SmsSendResult = z.infer<typeof SmsSendResult>;

export const MessageKind = z.enum(['sms', 'otp']);

export const StatusChange = z.looseObject({ status: MessageStatus, at: OffsetDateTime });

export const MessageRecord = z
  .looseObject({
    id: Id.meta({ description: 'The provider_message_id' }),
    kind: MessageKind,
    campaign_id: Id.nullable(),
    mobile_number: PlusNumber,
    sender: z.string(),
    message: z.string().optional().meta({ description: 'Text as sent (OTP codes are masked)' }),
    status: MessageStatus,
    segments: z.number().int().positive(),
    cost: MinorUnits,
    currency: Currency,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
    history: z.array(StatusChange).optional(),
  })
  .meta({ id: 'Message' });
export type MessageRecord = z.infer<typeof MessageRecord>;

export const CampaignStatus = z.enum(['queued', 'sending', 'completed']);

export const CampaignRecord = z
  .looseObject({
    id: Id,
    sender: z.string(),
    message: z.string().optional(),
    status: CampaignStatus,
    recipients: z.number().int().nonnegative(),
    segments: z.number().int().positive(),
    cost: MinorUnits,
    currency: Currency,
    counts: z.record(z.string(), z.number().int().nonnegative()).meta({ description: 'Messages per status' }),
    created_at: OffsetDateTime,
  })
  .meta({ id: 'Campaign' });
export type CampaignRecord = z.infer<typeof CampaignRecord>;

/**
 * GET /messages and GET /campaigns filter on a message status (spec: "The list filter status accepts a
 * message status value").
 */
export const StatusFilter = z.strictObject({ status: MessageStatus.optional() });
