/** Message states and the signed status events the provider delivers to webhook endpoints. */
import { z } from 'zod';
import { OffsetDateTime, PlusNumber } from './common.js';
import { FINAL_STATUSES, MAX_EVENTS_PER_BATCH, PENDING_STATUSES } from './constants.js';
import { isJsonObject } from './json.js';

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
    events: z.array(MessageStatusEvent).min(1).max(MAX_EVENTS_PER_BATCH),
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

/** An event of an authentic body that failed validation: kept for an operator, never silently dropped. */
export interface RejectedEvent {
  /** Its position in a batch body (0 for a single-event body). */
  index: number;
  reason: string;
  event: unknown;
}

/** A batch body's envelope; its events are validated one by one. Built once: zod compiles each new schema. */
const BatchEnvelope = z.object({ type: z.literal(BATCH_EVENT_TYPE), events: z.array(z.unknown()) });

/** The reason kept with each event past the first MAX_EVENTS_PER_BATCH of a batch. */
export const BATCH_TOO_LARGE_REASON = `batch_too_large: a batch carries at most ${MAX_EVENTS_PER_BATCH} events`;

/**
 * The events of an authentic body, each validated on its own: one malformed event in a batch does not cost
 * the others. A body that is neither a batch nor an event is one rejected event, and the events of a batch
 * past its first MAX_EVENTS_PER_BATCH are rejected unread (only the body's size limit bounds their number).
 */
export function parseWebhookEvents(json: unknown): { events: MessageStatusEvent[]; rejected: RejectedEvent[] } {
  // Only a body that names itself a batch is parsed as one: a failed parse builds an error, for nothing.
  const batch = isJsonObject(json) && json.type === BATCH_EVENT_TYPE ? BatchEnvelope.safeParse(json) : undefined;
  const candidates = batch?.success ? batch.data.events : [json];
  const events: MessageStatusEvent[] = [];
  const rejected: RejectedEvent[] = [];
  candidates.forEach((candidate, index) => {
    if (index >= MAX_EVENTS_PER_BATCH) {
      rejected.push({ index, reason: BATCH_TOO_LARGE_REASON, event: candidate });
      return;
    }
    const parsed = MessageStatusEvent.safeParse(candidate);
    if (parsed.success) events.push(parsed.data);
    else rejected.push({ index, reason: z.prettifyError(parsed.error).replace(/\n/g, '; '), event: candidate });
  });
  return { events, rejected };
}
