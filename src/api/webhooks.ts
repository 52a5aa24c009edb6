/** Webhook endpoint registration and management. */
import { z } from 'zod';
import { Id, OffsetDateTime } from './common.js';
import { EventKind } from './events.js';

/** Subscribed events: event kinds, or ['*'] for all (also what an omitted `events` means). */
export const EventSubscription = z.union([z.tuple([z.literal('*')]), z.array(EventKind).min(1)]);

const WebhookUrl = z.url({ protocol: /^https?$/ }).max(2048);

export const WebhookCreateRequest = z
  .strictObject({
    url: WebhookUrl,
    events: EventSubscription.optional(),
    batch: z.boolean().default(false).meta({ description: 'Deliver message.status.batch bodies' }),
  })
  .meta({ id: 'WebhookCreateRequest' });
export type WebhookCreateRequest = z.input<typeof WebhookCreateRequest>;

export const WebhookUpdateRequest = z
  .strictObject({ url: WebhookUrl.optional(), events: EventSubscription.optional(), batch: z.boolean().optional() })
  .refine((u) => Object.keys(u).length > 0, 'give at least one of url, events, batch')
  .meta({ id: 'WebhookUpdateRequest' });
export type WebhookUpdateRequest = z.infer<typeof WebhookUpdateRequest>;

export const WebhookEndpoint = z
  .looseObject({
    id: Id,
    url: z.string(),
    events: z.array(z.string()),
    batch: z.boolean(),
    created_at: OffsetDateTime,
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

/** The registration result also carries the signing secret, shown only this once. */
export const WebhookRegistration = WebhookEndpoint.extend({
  secret: z
    .string()
    .regex(/^whsec_/)
    .meta({ description: 'Signing secret, shown once' }),
}).meta({ id: 'WebhookRegistration' });
export type WebhookRegistration = z.infer<typeof WebhookRegistration>;
