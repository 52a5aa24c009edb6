/** Message states and the signed status events the provider delivers to webhook endpoints. */
import { z } from 'zod';
import { OffsetDateTime, PlusNumber } from './common.js';
import { FINAL_STATUSES, PENDING_STATUSES } from './constants.js';

export const FinalStatus = z.enum(FINAL_STATUSES);
export type FinalStatus = z.infer<typeof FinalStatus>;

export const MessageStatus = z.enum([...PENDING_STATUSES, ...FINAL_STATUSES]);
export type MessageStatus = z.infer<typeof MessageStatus>;

export const EVENT_KINDS = FINAL_STATUSES.map((s) => `message.${s}` as const);
export const EventKind = z.enum(EVENT_KINDS as [`message.${FinalStatus}`, ...`message.${FinalStatus}`[]]);
export type EventKind = z.infer<typeof EventKind>;

export function eventKindOf(status: FinalStatus): EventKind {
  return `message.${status}`;
}

/** Message status event payload (spec "Events", rule 2): `status` mirrors the event kind. */
export const MessageStatusEvent = z
  .object({
    event: EventKind,
    mobile_number: PlusNumber,
    provider_message_id: z.string().min(1).max(200),
    status: FinalStatus,
    timestamp: OffsetDateTime,
  })
  .refine((e) => e.event === eventKindOf(e.status), {
    message: 'status must equal the event kind without the "message." prefix',
    path: ['status'],
  })
  .meta({ id: 'MessageStatusEvent' });
export type MessageStatusEvent = z.infer<typeof MessageStatusEvent>;

export const BATCH_EVENT_TYPE = 'message.status.batch';

/** Batch status event payload (spec "Events", rule 4). */
export const BatchStatusEvent = z
  .object({
    type: z.literal(BATCH_EVENT_TYPE),
    events: z.array(MessageStatusEvent).min(1).max(1000),
  })
  .meta({ id: 'BatchStatusEvent' });
export type BatchStatusEvent = z.infer<typeof BatchStatusEvent>;

/** Any webhook body: a single event or a batch. */
export const WebhookBody = z.union([BatchStatusEvent, MessageStatusEvent]);
export type WebhookBody = z.infer<typeof WebhookBody>;

/** The events of a body, whichever form it came in. */
export function eventsOf(body: WebhookBody): MessageStatusEvent[] {
  return 'type' in body ? body.events : [body];
}
