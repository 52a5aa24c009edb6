/** Reading webhook deliveries and their recorded attempts (admin API and console). */
import type { DeliveryAttempt, DeliveryRecord } from '../api/admin.js';
import type { Db } from './db.js';
import { timestampOf } from './time.js';

interface DeliveryRow {
  seq: number;
  id: string;
  webhook_id: string;
  url: string | null;
  body: string;
  state: DeliveryRecord['state'];
  next_attempt_at: number;
  created_at: number;
}

interface AttemptRow {
  attempt: number;
  started_at: number;
  latency_ms: number;
  status: number | null;
  error: string | null;
  response_start: string | null;
}

export interface DeliveryFilter {
  messageId?: string | undefined;
  state?: DeliveryRecord['state'] | undefined;
  limit: number;
}

/** The account's deliveries, newest first (optionally those carrying one message's events, or in one state). */
export function listDeliveries(db: Db, accountId: string, filter: DeliveryFilter): DeliveryRecord[] {
  const where = ['w.account_id = @account'];
  if (filter.messageId) where.push('d.id IN (SELECT delivery_id FROM delivery_messages WHERE message_id = @message)');
  if (filter.state) where.push('d.state = @state');
  const rows = db
    .prepare(
      `SELECT d.seq, d.id, d.webhook_id, w.url, d.body, d.state, d.next_attempt_at, d.created_at
         FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE ${where.join(' AND ')} ORDER BY d.seq DESC LIMIT @limit`,
    )
    .all({
      account: accountId,
      message: filter.messageId ?? null,
      state: filter.state ?? null,
      limit: filter.limit,
    }) as DeliveryRow[];
  return rows.map((row) => deliveryJson(db, row));
}

export function getDelivery(db: Db, accountId: string, deliveryId: string): DeliveryRecord | undefined {
  const row = db
    .prepare(
      `SELECT d.seq, d.id, d.webhook_id, w.url, d.body, d.state, d.next_attempt_at, d.created_at
         FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.id = ? AND w.account_id = ?`,
    )
    .get(deliveryId, accountId) as DeliveryRow | undefined;
  return row && deliveryJson(db, row);
}

/** The account a delivery belongs to (the admin API addresses deliveries by id alone). */
export function accountOfDelivery(db: Db, deliveryId: string): string | undefined {
  const row = db
    .prepare('SELECT w.account_id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ?')
    .get(deliveryId) as { account_id: string } | undefined;
  return row?.account_id;
}

function deliveryJson(db: Db, row: DeliveryRow): DeliveryRecord {
  const attempts = db
    .prepare(
      'SELECT attempt, started_at, latency_ms, status, error, response_start FROM delivery_attempts WHERE delivery_id = ? ORDER BY seq',
    )
    .all(row.id) as AttemptRow[];
  const messageIds = (
    db.prepare('SELECT message_id FROM delivery_messages WHERE delivery_id = ? ORDER BY rowid').all(row.id) as {
      message_id: string;
    }[]
  ).map((m) => m.message_id);
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    url: row.url,
    state: row.state,
    event_types: eventTypesOf(row.body),
    message_ids: messageIds,
    body: row.body,
    attempts: attempts.map(attemptJson),
    next_attempt_at: row.state === 'pending' ? timestampOf(row.next_attempt_at) : null,
    created_at: timestampOf(row.created_at),
  };
}

function attemptJson(row: AttemptRow): DeliveryAttempt {
  return {
    attempt: row.attempt,
    at: timestampOf(row.started_at),
    latency_ms: row.latency_ms,
    status: row.status,
    error: row.error,
    response_start: row.response_start,
  };
}

/** `message.status.batch` plus the kinds inside it, or the one event's kind. */
function eventTypesOf(body: string): string[] {
  try {
    const parsed = JSON.parse(body) as { type?: string; event?: string; events?: { event?: string }[] };
    if (parsed.type && Array.isArray(parsed.events))
      return [parsed.type, ...new Set(parsed.events.map((e) => e.event ?? '?'))];
    return parsed.event ? [parsed.event] : [];
  } catch {
    return [];
  }
}
