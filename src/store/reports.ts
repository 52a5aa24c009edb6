/**
 * Reports and rejected events: what the store tells about messages (a campaign's rows, the outcome feed,
 * one message, the messages sent to a number) and the events the ingress refused, kept sealed for an
 * operator to read.
 */
import type { SqlValue } from './driver.js';
import { type RefusalColumns, refusalOf } from './outbox.js';
import type { PersonalData } from './personal-data.js';
import {
  checkId,
  checkLimit,
  checkText,
  decodeCursor,
  encodeCursor,
  list,
  type MessageRow,
  sourceOf,
  type StoreContext,
  storedFinalOf,
} from './sql.js';
import { type MessageStore, type ReportRow, StoreInputError, type Waiter } from './types.js';

/** The context a rejected event is sealed under (it binds no row: the event may name any message). */
export const REJECTED_CONTEXT = 'rejected-event';

export type ReportsAndRejected = Pick<
  MessageStore,
  'report' | 'settled' | 'message' | 'messagesTo' | 'recordRejected' | 'rejected'
>;

export function reportsAndRejected(context: StoreContext): ReportsAndRejected {
  return {
    ...campaignReports(context),
    ...messageLookups(context),
    ...rejectedEvents(context),
  };
}

/** A campaign's rows, and the feed of outcomes as they were recorded. */
function campaignReports({ driver, personal }: StoreContext): Pick<MessageStore, 'report' | 'settled'> {
  return {
    async report({ campaignKey, status, after, limit }) {
      checkText('campaignKey', campaignKey, 1000);
      checkLimit(limit);
      const where = ['campaign_key = ?'];
      const params: SqlValue[] = [campaignKey];
      if (status !== undefined) {
        checkText('status', status, 50);
        where.push('COALESCE(final_status, last_status) = ?');
        params.push(status);
      }
      if (after !== undefined) {
        where.push('provider_message_id > ?');
        params.push(decodeCursor(after));
      }
      const found = await driver.read((tx) =>
        tx.all<MessageRow>(`SELECT * FROM messages WHERE ${where.join(' AND ')} ORDER BY provider_message_id LIMIT ?`, [
          ...params,
          limit + 1,
        ]),
      );
      const page = found.slice(0, limit).map((r) => reportRow(personal, r));
      const last = page.at(-1);
      return { rows: page, next: found.length > limit && last ? encodeCursor(last.providerMessageId) : null };
    },

    async settled({ campaignKey, after, limit }) {
      checkText('campaignKey', campaignKey, 1000);
      checkLimit(limit);
      const found = await driver.read((tx) =>
        tx.all<MessageRow>(
          `SELECT * FROM messages
            WHERE campaign_key = ? AND final_recorded_at >= ?
              AND (final_recorded_at > ? OR provider_message_id > ?)
            ORDER BY final_recorded_at, provider_message_id LIMIT ?`,
          [campaignKey, after.recordedAt, after.recordedAt, after.providerMessageId, limit],
        ),
      );
      return found.map((r) => ({ ...reportRow(personal, r), recordedAt: r.final_recorded_at! }));
    },
  };
}

/** One message, and the messages sent to a number. */
function messageLookups({ driver, personal }: StoreContext): Pick<MessageStore, 'message' | 'messagesTo'> {
  return {
    async message(providerMessageId) {
      checkId(providerMessageId);
      const [row, waiters] = await driver.read(
        async (tx) =>
          [
            (await tx.all<MessageRow>('SELECT * FROM messages WHERE provider_message_id = ?', [providerMessageId]))[0],
            await tx.all<WaiterRow>(
              `SELECT w.workflow_id, w.registered_at, w.released_at, w.untold_since, w.told_at,
                      c.refusals, c.refusal, c.retry_at
               FROM waiters w LEFT JOIN relay_claims c ON c.workflow_id = w.workflow_id
               WHERE w.provider_message_id = ? ORDER BY w.workflow_id`,
              [providerMessageId],
            ),
          ] as const,
      );
      if (!row) return null;
      return {
        providerMessageId: row.provider_message_id,
        final: storedFinalOf(row),
        lastStatus: row.last_status,
        lastStatusTimestamp: row.last_status_timestamp,
        number: numberOf(personal, row),
        campaignKey: row.campaign_key,
        firstSeenAt: Number(row.first_seen_at),
        lastSeenAt: Number(row.last_seen_at),
        waiters: waiters.map(waiterOf),
      };
    },

    async messagesTo(number) {
      checkText('number', number, 50);
      const lookups = personal.lookups(number);
      const found = await driver.read((tx) =>
        tx.all<{ provider_message_id: string }>(
          `SELECT provider_message_id FROM messages WHERE recipient_lookup IN (${list(lookups.length)})
           ORDER BY provider_message_id`,
          lookups,
        ),
      );
      return found.map((r) => r.provider_message_id);
    },
  };
}

/** The events the ingress refused, sealed, for an operator to read. */
function rejectedEvents({ driver, personal }: StoreContext): Pick<MessageStore, 'recordRejected' | 'rejected'> {
  return {
    async recordRejected(reason, event) {
      checkText('reason', reason, 10_000);
      const json = JSON.stringify(event ?? null);
      await driver.transaction((tx) =>
        tx.run('INSERT INTO rejected_events (received_at, reason, event) VALUES (?, ?, ?)', [
          Date.now(),
          reason,
          personal.seal(json, REJECTED_CONTEXT),
        ]),
      );
    },

    async rejected({ limit, before }) {
      checkLimit(limit);
      const beforeId = before === undefined ? null : Number(decodeCursor(before));
      if (beforeId !== null && !Number.isSafeInteger(beforeId)) throw new StoreInputError('invalid cursor');
      const found = await driver.read((tx) =>
        tx.all<{ id: number; received_at: number; reason: string; event: string }>(
          `SELECT id, received_at, reason, event FROM rejected_events
           ${beforeId === null ? '' : 'WHERE id < ?'} ORDER BY id DESC LIMIT ?`,
          beforeId === null ? [limit + 1] : [beforeId, limit + 1],
        ),
      );
      const page = found.slice(0, limit).map((r) => ({
        id: Number(r.id),
        receivedAt: Number(r.received_at),
        reason: r.reason,
        event: JSON.parse(personal.open(r.event, REJECTED_CONTEXT)) as unknown,
      }));
      const last = page.at(-1);
      return { rows: page, next: found.length > limit && last ? encodeCursor(String(last.id)) : null };
    },
  };
}

function numberOf(personal: PersonalData, row: MessageRow): string | null {
  return row.recipient === null ? null : personal.open(row.recipient, row.provider_message_id);
}

function reportRow(personal: PersonalData, r: MessageRow): ReportRow {
  return {
    providerMessageId: r.provider_message_id,
    number: numberOf(personal, r),
    status: r.final_status ?? r.last_status,
    final: r.final_status !== null,
    timestamp: r.final_status !== null ? r.final_timestamp : r.last_status_timestamp,
    source: r.final_status !== null ? sourceOf(r.final_source) : null,
  };
}

interface WaiterRow extends RefusalColumns {
  workflow_id: string;
  registered_at: number | string;
  released_at: number | string | null;
  untold_since: number | string | null;
  told_at: number | string | null;
}

function waiterOf(w: WaiterRow): Waiter {
  const time = (value: number | string | null) => (value === null ? null : Number(value));
  const untoldSince = time(w.untold_since);
  // Only while its outcome waits: a refusal of the workflow's signals is why.
  const refused = untoldSince === null ? null : refusalOf(w);
  return {
    workflowId: w.workflow_id,
    registeredAt: Number(w.registered_at),
    releasedAt: time(w.released_at),
    untoldSince,
    toldAt: time(w.told_at),
    ...(refused ? { refused } : {}),
  };
}
