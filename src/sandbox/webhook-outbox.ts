/**
 * The outbox of webhook deliveries. A status event becomes rows in the same transaction as the state
 * change that caused it, so no event is lost to a crash: one `deliveries` row per subscribed plain
 * endpoint, or a `batch_items` row per batch-enabled endpoint, gathered into one message.status.batch
 * delivery per endpoint and tick (at most `batchMax` events each).
 */
import { formatTimestamp } from '../api/common.js';
import { FINAL_STATUSES } from '../api/constants.js';
import {
  BATCH_EVENT_TYPE,
  type BatchStatusEvent,
  eventKindOf,
  eventsOf,
  type MessageStatusEvent,
  type WebhookBody,
} from '../api/events.js';
import type { Db } from './db.js';
import { newId } from './ids.js';

interface EndpointRow {
  id: string;
  events: string;
  batch: number;
}

export function isSubscribed(events: string[], kind: string): boolean {
  return events.includes('*') || events.includes(kind);
}

export function enqueueStatusEvent(db: Db, accountId: string, event: MessageStatusEvent, now: number): void {
  const endpoints = db
    .prepare('SELECT id, events, batch FROM webhooks WHERE account_id = ? AND deleted_at IS NULL ORDER BY seq')
    .all(accountId) as EndpointRow[];
  const body = JSON.stringify(event);
  for (const endpoint of endpoints) {
    if (!isSubscribed(JSON.parse(endpoint.events) as string[], event.event)) continue;
    if (endpoint.batch) {
      db.prepare('INSERT INTO batch_items (webhook_id, event) VALUES (?, ?)').run(endpoint.id, body);
    } else {
      insertDelivery(db, endpoint.id, body, [event.provider_message_id], now);
    }
  }
}

/** A delivery row, linked to the messages whose events it carries (so a message can list its deliveries). */
function insertDelivery(db: Db, webhookId: string, body: string, messageIds: string[], now: number): string {
  const id = newId('evt');
  db.prepare(
    "INSERT INTO deliveries (id, webhook_id, body, state, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)",
  ).run(id, webhookId, body, now, now, now);
  const link = db.prepare('INSERT OR IGNORE INTO delivery_messages (delivery_id, message_id) VALUES (?, ?)');
  for (const messageId of messageIds) link.run(id, messageId);
  return id;
}

/** Turns waiting batch items into deliveries: per endpoint, chunks of up to `batchMax` events, oldest first. */
export function collectBatches(db: Db, batchMax: number, now: number): void {
  db.transaction(() => {
    const items = db.prepare('SELECT seq, webhook_id, event FROM batch_items ORDER BY seq').all() as {
      seq: number;
      webhook_id: string;
      event: string;
    }[];
    if (items.length === 0) return;
    const byEndpoint = new Map<string, string[]>();
    for (const item of items) {
      const list = byEndpoint.get(item.webhook_id) ?? [];
      list.push(item.event);
      byEndpoint.set(item.webhook_id, list);
    }
    for (const [webhookId, events] of byEndpoint) {
      for (let i = 0; i < events.length; i += batchMax) {
        const batch: BatchStatusEvent = {
          type: BATCH_EVENT_TYPE,
          events: events.slice(i, i + batchMax).map((e) => JSON.parse(e) as MessageStatusEvent),
        };
        insertDelivery(
          db,
          webhookId,
          JSON.stringify(batch),
          batch.events.map((e) => e.provider_message_id),
          now,
        );
      }
    }
    db.prepare('DELETE FROM batch_items WHERE seq <= ?').run(items[items.length - 1]!.seq);
  })();
}

/**
 * Webhook chaos: a delivery carrying `body`'s events again, each with the next final state and a second later
 * (a carrier's late, contradicting receipt). The messages' own states do not change. Answers its delivery's id.
 */
export function enqueueContradiction(db: Db, webhookId: string, body: string, now: number): string {
  const parsed = JSON.parse(body) as WebhookBody;
  const events = eventsOf(parsed).map(contradicting);
  const contradiction: WebhookBody = 'type' in parsed ? { ...parsed, events } : events[0]!;
  return insertDelivery(
    db,
    webhookId,
    JSON.stringify(contradiction),
    events.map((e) => e.provider_message_id),
    now,
  );
}

function contradicting(event: MessageStatusEvent): MessageStatusEvent {
  const status = FINAL_STATUSES[(FINAL_STATUSES.indexOf(event.status) + 1) % FINAL_STATUSES.length]!;
  const timestamp = formatTimestamp(new Date(Date.parse(event.timestamp) + 1_000));
  return { ...event, event: eventKindOf(status), status, timestamp };
}
