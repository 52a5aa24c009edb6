/**
 * The message store over either dialect (the SQL is shared; `driver.ts` hides the differences).
 *
 * The invariant: of an event and the registration of its message, whichever is written second sees the
 * first. Both `register` and `recordEvents` first upsert the message row (`INSERT … ON CONFLICT DO UPDATE`),
 * which takes that row's lock until commit, and only then read the other side (finals, resp. waiters). So
 * when both run at once the second one blocks on the row until the first commits, and its later read (a new
 * statement: under PostgreSQL's READ COMMITTED a fresh snapshot) sees the first's rows. On SQLite every
 * write transaction is BEGIN IMMEDIATE, so they are serial anyway. Rows are upserted in id order, so two
 * transactions locking several messages never wait for each other in a cycle.
 */
import { type FinalStatus, isFinalStatus } from '../api/constants.js';
import type { Driver, Executor, SqlValue } from './driver.js';
import { SqlOtpEvents } from './otp-events.js';
import type { PersonalData } from './personal-data.js';
import {
  type BudgetAnswer,
  type BudgetSettings,
  fullBucket,
  type RequestClass,
  takeRequest,
} from './request-budget.js';
import {
  type ErasureResult,
  type FinalOutcome,
  type MessageStore,
  type Page,
  type PurgeOptions,
  type PurgeResult,
  type RejectedEvent,
  type ReportQuery,
  type ReportRow,
  type SettledQuery,
  type SettledRow,
  type SentMessage,
  type StatusEventRecord,
  type StoredMessage,
  type StoreHooks,
  StoreInputError,
  type SuppressionEntry,
  type SuppressionRow,
  type WaiterOutcomes,
} from './types.js';

/** Rows per statement: well under SQLite's 32766 and PostgreSQL's 65535 parameters. */
const BATCH = 500;
const MAX_ID_LENGTH = 200;
const REJECTED_CONTEXT = 'rejected-event';

interface MessageRow {
  provider_message_id: string;
  final_status: string | null;
  final_timestamp: string | null;
  final_event_id: string | null;
  last_status: string | null;
  last_status_timestamp: string | null;
  recipient: string | null;
  campaign_key: string | null;
  first_seen_at: number;
  last_seen_at: number;
  final_recorded_at: number | null;
}

export class SqlMessageStore implements MessageStore {
  readonly otp: SqlOtpEvents;

  constructor(
    private readonly driver: Driver,
    private readonly personal: PersonalData,
    private readonly hooks: StoreHooks = {},
  ) {
    this.otp = new SqlOtpEvents(driver, personal);
  }

  get dialect() {
    return this.driver.dialect;
  }

  async register(workflowId: string, messages: readonly SentMessage[]): Promise<FinalOutcome[]> {
    checkText('workflowId', workflowId, 1000);
    messages.forEach(checkSent);
    const unique = uniqueBy(messages, (m) => m.providerMessageId);
    if (unique.length === 0) return [];
    const ids = unique.map((m) => m.providerMessageId);
    const now = Date.now();
    return this.driver.transaction(async (tx) => {
      for (const batch of chunks(unique)) {
        await tx.run(
          `INSERT INTO messages (provider_message_id, recipient, recipient_lookup, campaign_key, first_seen_at, last_seen_at)
           VALUES ${rows(batch.length, 6)}
           ON CONFLICT (provider_message_id) DO UPDATE SET
             recipient = COALESCE(messages.recipient, excluded.recipient),
             recipient_lookup = COALESCE(messages.recipient_lookup, excluded.recipient_lookup),
             campaign_key = COALESCE(messages.campaign_key, excluded.campaign_key),
             last_seen_at = excluded.last_seen_at`,
          batch.flatMap((m) => [
            m.providerMessageId,
            m.number ? this.personal.seal(m.number, m.providerMessageId) : null,
            m.number ? this.personal.lookup(m.number) : null,
            m.campaignKey ?? null,
            now,
            now,
          ]),
        );
        await tx.run(
          `INSERT INTO waiters (provider_message_id, workflow_id, registered_at) VALUES ${rows(batch.length, 3)}
           ON CONFLICT (provider_message_id, workflow_id) DO UPDATE SET
             registered_at = CASE WHEN waiters.released_at IS NULL THEN waiters.registered_at ELSE excluded.registered_at END,
             released_at = NULL`,
          batch.flatMap((m) => [m.providerMessageId, workflowId, now]),
        );
      }
      await this.hooks.afterWrite?.('register');
      return finalsOf(tx, ids);
    });
  }

  async recordEvents(events: readonly StatusEventRecord[]): Promise<WaiterOutcomes[]> {
    events.forEach(checkEvent);
    const folded = foldEvents(events);
    if (folded.length === 0) return [];
    const now = Date.now();
    return this.driver.transaction(async (tx) => {
      const finals: FinalOutcome[] = [];
      for (const batch of chunks(folded)) {
        const written = await tx.all<MessageRow>(
          `INSERT INTO messages (provider_message_id, final_status, final_timestamp, final_event_id,
             last_status, last_status_timestamp, first_seen_at, last_seen_at, final_recorded_at)
           VALUES ${rows(batch.length, 9)}
           ON CONFLICT (provider_message_id) DO UPDATE SET
             final_status = COALESCE(messages.final_status, excluded.final_status),
             final_timestamp = CASE WHEN messages.final_status IS NULL THEN excluded.final_timestamp ELSE messages.final_timestamp END,
             final_event_id = CASE WHEN messages.final_status IS NULL THEN excluded.final_event_id ELSE messages.final_event_id END,
             final_recorded_at = CASE WHEN messages.final_status IS NULL THEN excluded.final_recorded_at ELSE messages.final_recorded_at END,
             last_status = COALESCE(excluded.last_status, messages.last_status),
             last_status_timestamp = CASE WHEN excluded.last_status IS NULL THEN messages.last_status_timestamp ELSE excluded.last_status_timestamp END,
             last_seen_at = excluded.last_seen_at
           RETURNING provider_message_id, final_status, final_timestamp, final_event_id`,
          batch.flatMap((e) => [
            e.providerMessageId,
            e.final?.status ?? null,
            e.final?.timestamp ?? null,
            e.final?.eventId ?? null,
            e.last?.status ?? null,
            e.last?.timestamp ?? null,
            now,
            now,
            e.final ? now : null,
          ]),
        );
        finals.push(...written.flatMap(outcomeOf));
      }
      await this.hooks.afterWrite?.('recordEvents');
      if (finals.length === 0) return [];
      const byId = new Map(finals.map((f) => [f.providerMessageId, f]));
      const waiting = new Map<string, FinalOutcome[]>();
      for (const batch of chunks([...byId.keys()])) {
        const found = await tx.all<{ provider_message_id: string; workflow_id: string }>(
          `SELECT provider_message_id, workflow_id FROM waiters
           WHERE released_at IS NULL AND provider_message_id IN (${list(batch.length)})
           ORDER BY workflow_id, provider_message_id`,
          batch,
        );
        for (const w of found) {
          const outcomes = waiting.get(w.workflow_id) ?? [];
          outcomes.push(byId.get(w.provider_message_id)!);
          waiting.set(w.workflow_id, outcomes);
        }
      }
      return [...waiting].map(([workflowId, outcomes]) => ({ workflowId, outcomes }));
    });
  }

  async outcomes(providerMessageIds: readonly string[]): Promise<FinalOutcome[]> {
    const ids = [...new Set(providerMessageIds)];
    ids.forEach(checkId);
    if (ids.length === 0) return [];
    return this.driver.read((tx) => finalsOf(tx, ids));
  }

  async release(workflowId: string, providerMessageIds?: readonly string[]): Promise<number> {
    checkText('workflowId', workflowId, 1000);
    const now = Date.now();
    if (!providerMessageIds)
      return this.driver.transaction((tx) =>
        tx.run('UPDATE waiters SET released_at = ? WHERE workflow_id = ? AND released_at IS NULL', [now, workflowId]),
      );
    const ids = [...new Set(providerMessageIds)];
    ids.forEach(checkId);
    return this.driver.transaction(async (tx) => {
      let released = 0;
      for (const batch of chunks(ids))
        released += await tx.run(
          `UPDATE waiters SET released_at = ?
           WHERE workflow_id = ? AND released_at IS NULL AND provider_message_id IN (${list(batch.length)})`,
          [now, workflowId, ...batch],
        );
      return released;
    });
  }

  async purge({ olderThan, abandonWaitersRegisteredBefore }: PurgeOptions): Promise<PurgeResult> {
    const cutoff = checkDate('olderThan', olderThan);
    // No cutoff: every unreleased waiter keeps its message (registered_at >= -1 always holds).
    const abandoned = abandonWaitersRegisteredBefore
      ? checkDate('abandonWaitersRegisteredBefore', abandonWaitersRegisteredBefore)
      : -1;
    let messages = 0;
    // Small transactions: retention must not hold row locks the ingress is waiting for. Candidates are
    // locked in id order like everywhere else (PostgreSQL; SQLite's writers are serial anyway), then
    // deleted only if still old and unawaited: a registration that got there first bumped last_seen_at.
    const lock = this.driver.dialect === 'postgres' ? 'FOR UPDATE' : '';
    const unawaited = `NOT EXISTS (SELECT 1 FROM waiters w WHERE w.provider_message_id = messages.provider_message_id
                         AND w.released_at IS NULL AND w.registered_at >= ?)`;
    for (;;) {
      const batch = await this.driver.transaction(async (tx) => {
        const candidates = await tx.all<{ provider_message_id: string }>(
          `SELECT provider_message_id FROM messages WHERE last_seen_at < ? AND ${unawaited}
           ORDER BY provider_message_id LIMIT ${BATCH} ${lock}`,
          [cutoff, abandoned],
        );
        if (candidates.length === 0) return { deleted: 0, more: false };
        const ids = candidates.map((r) => r.provider_message_id);
        const gone = await tx.all<{ provider_message_id: string }>(
          `DELETE FROM messages WHERE provider_message_id IN (${list(ids.length)}) AND last_seen_at < ? AND ${unawaited}
           RETURNING provider_message_id`,
          [...ids, cutoff, abandoned],
        );
        const goneIds = gone.map((r) => r.provider_message_id);
        if (goneIds.length > 0)
          await tx.run(`DELETE FROM waiters WHERE provider_message_id IN (${list(goneIds.length)})`, goneIds);
        return { deleted: goneIds.length, more: candidates.length === BATCH };
      });
      messages += batch.deleted;
      if (!batch.more) break;
    }
    const rejectedEvents = await this.driver.transaction((tx) =>
      tx.run('DELETE FROM rejected_events WHERE received_at < ?', [cutoff]),
    );
    const otpEvents = await this.driver.transaction((tx) => tx.run('DELETE FROM otp_events WHERE at < ?', [cutoff]));
    return { messages, rejectedEvents, otpEvents };
  }

  private reportRow(r: MessageRow): ReportRow {
    return {
      providerMessageId: r.provider_message_id,
      number: this.numberOf(r),
      status: r.final_status ?? r.last_status,
      final: r.final_status !== null,
      timestamp: r.final_status !== null ? r.final_timestamp : r.last_status_timestamp,
    };
  }

  async report({ campaignKey, status, after, limit }: ReportQuery): Promise<Page<ReportRow>> {
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
    const found = await this.driver.read((tx) =>
      tx.all<MessageRow>(`SELECT * FROM messages WHERE ${where.join(' AND ')} ORDER BY provider_message_id LIMIT ?`, [
        ...params,
        limit + 1,
      ]),
    );
    const page = found.slice(0, limit).map((r) => this.reportRow(r));
    const last = page.at(-1);
    return { rows: page, next: found.length > limit && last ? encodeCursor(last.providerMessageId) : null };
  }

  async settled({ campaignKey, after, limit }: SettledQuery): Promise<SettledRow[]> {
    checkText('campaignKey', campaignKey, 1000);
    checkLimit(limit);
    const found = await this.driver.read((tx) =>
      tx.all<MessageRow>(
        `SELECT * FROM messages
          WHERE campaign_key = ? AND final_recorded_at >= ?
            AND (final_recorded_at > ? OR provider_message_id > ?)
          ORDER BY final_recorded_at, provider_message_id LIMIT ?`,
        [campaignKey, after.recordedAt, after.recordedAt, after.providerMessageId, limit],
      ),
    );
    return found.map((r) => ({ ...this.reportRow(r), recordedAt: r.final_recorded_at! }));
  }

  async message(providerMessageId: string): Promise<StoredMessage | null> {
    checkId(providerMessageId);
    const [row, waiters] = await this.driver.read(
      async (tx) =>
        [
          (await tx.all<MessageRow>('SELECT * FROM messages WHERE provider_message_id = ?', [providerMessageId]))[0],
          await tx.all<{ workflow_id: string; registered_at: number; released_at: number | null }>(
            'SELECT workflow_id, registered_at, released_at FROM waiters WHERE provider_message_id = ? ORDER BY workflow_id',
            [providerMessageId],
          ),
        ] as const,
    );
    if (!row) return null;
    return {
      providerMessageId: row.provider_message_id,
      final: outcomeOf(row)[0] ?? null,
      lastStatus: row.last_status,
      lastStatusTimestamp: row.last_status_timestamp,
      number: this.numberOf(row),
      campaignKey: row.campaign_key,
      firstSeenAt: Number(row.first_seen_at),
      lastSeenAt: Number(row.last_seen_at),
      waiters: waiters.map((w) => ({
        workflowId: w.workflow_id,
        registeredAt: Number(w.registered_at),
        releasedAt: w.released_at === null ? null : Number(w.released_at),
      })),
    };
  }

  async messagesTo(number: string): Promise<string[]> {
    checkText('number', number, 50);
    const lookups = this.personal.lookups(number);
    const found = await this.driver.read((tx) =>
      tx.all<{ provider_message_id: string }>(
        `SELECT provider_message_id FROM messages WHERE recipient_lookup IN (${list(lookups.length)})
         ORDER BY provider_message_id`,
        lookups,
      ),
    );
    return found.map((r) => r.provider_message_id);
  }

  async recordRejected(reason: string, event: unknown): Promise<void> {
    checkText('reason', reason, 10_000);
    const json = JSON.stringify(event ?? null);
    await this.driver.transaction((tx) =>
      tx.run('INSERT INTO rejected_events (received_at, reason, event) VALUES (?, ?, ?)', [
        Date.now(),
        reason,
        this.personal.seal(json, REJECTED_CONTEXT),
      ]),
    );
  }

  async rejected({ limit, before }: { limit: number; before?: string }): Promise<Page<RejectedEvent>> {
    checkLimit(limit);
    const beforeId = before === undefined ? null : Number(decodeCursor(before));
    if (beforeId !== null && !Number.isSafeInteger(beforeId)) throw new StoreInputError('invalid cursor');
    const found = await this.driver.read((tx) =>
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
      event: JSON.parse(this.personal.open(r.event, REJECTED_CONTEXT)) as unknown,
    }));
    const last = page.at(-1);
    return { rows: page, next: found.length > limit && last ? encodeCursor(String(last.id)) : null };
  }

  async suppress(entries: readonly SuppressionEntry[]): Promise<number> {
    entries.forEach(checkSuppression);
    const unique = uniqueBy(
      entries.map((e) => ({ ...e, lookup: this.personal.lookup(e.number) })),
      (e) => e.lookup,
    );
    if (unique.length === 0) return 0;
    const now = Date.now();
    return this.driver.transaction(async (tx) => {
      let added = 0;
      for (const batch of chunks(unique)) {
        // Listed under an older lookup value (added before encryption was configured): already listed.
        const older = await tx.all<{ lookup: string }>(
          `SELECT lookup FROM suppressions WHERE lookup IN (${list(batch.length)})`,
          batch.map((e) => e.number),
        );
        const listed = new Set(older.map((r) => r.lookup));
        const fresh = batch.filter((e) => !listed.has(e.number));
        if (fresh.length === 0) continue;
        added += await tx.run(
          `INSERT INTO suppressions (lookup, number, reason, added_at) VALUES ${rows(fresh.length, 4)}
           ON CONFLICT (lookup) DO NOTHING`,
          fresh.flatMap((e) => [e.lookup, this.personal.seal(e.number, e.lookup), e.reason ?? null, now]),
        );
      }
      return added;
    });
  }

  async unsuppress(numbers: readonly string[]): Promise<number> {
    numbers.forEach((n) => checkNumber(n));
    const lookups = [...new Set(numbers.flatMap((n) => this.personal.lookups(n)))];
    if (lookups.length === 0) return 0;
    return this.driver.transaction(async (tx) => {
      let removed = 0;
      for (const batch of chunks(lookups))
        removed += await tx.run(`DELETE FROM suppressions WHERE lookup IN (${list(batch.length)})`, batch);
      return removed;
    });
  }

  async suppressedAmong(numbers: readonly string[]): Promise<string[]> {
    numbers.forEach((n) => checkNumber(n));
    const byLookup = new Map<string, string>();
    for (const number of new Set(numbers))
      for (const lookup of this.personal.lookups(number)) byLookup.set(lookup, number);
    if (byLookup.size === 0) return [];
    const found = new Set<string>();
    await this.driver.read(async (tx) => {
      for (const batch of chunks([...byLookup.keys()])) {
        const listed = await tx.all<{ lookup: string }>(
          `SELECT lookup FROM suppressions WHERE lookup IN (${list(batch.length)})`,
          batch,
        );
        for (const r of listed) found.add(byLookup.get(r.lookup)!);
      }
    });
    return [...new Set(numbers)].filter((n) => found.has(n));
  }

  async suppressions({ limit, after }: { limit: number; after?: string }): Promise<Page<SuppressionRow>> {
    checkLimit(limit);
    const from = after === undefined ? null : decodeCursor(after);
    const separator = from?.indexOf(':') ?? -1;
    const fromTime = from === null ? null : Number(from.slice(0, separator));
    if (from !== null && (separator < 1 || !Number.isSafeInteger(fromTime)))
      throw new StoreInputError('invalid cursor');
    const found = await this.driver.read((tx) =>
      tx.all<{ lookup: string; number: string | null; reason: string | null; added_at: number }>(
        `SELECT lookup, number, reason, added_at FROM suppressions
         ${from === null ? '' : 'WHERE added_at > ? OR (added_at = ? AND lookup > ?)'}
         ORDER BY added_at, lookup LIMIT ?`,
        from === null ? [limit + 1] : [fromTime, fromTime, from.slice(separator + 1), limit + 1],
      ),
    );
    const page = found.slice(0, limit);
    const last = page.at(-1);
    return {
      rows: page.map((r) => ({
        number: r.number === null ? null : this.personal.open(r.number, r.lookup),
        reason: r.reason,
        addedAt: Number(r.added_at),
      })),
      next: found.length > limit && last ? encodeCursor(`${Number(last.added_at)}:${last.lookup}`) : null,
    };
  }

  async eraseNumber(number: string): Promise<ErasureResult> {
    checkNumber(number);
    const lookups = this.personal.lookups(number);
    const mentions = new RegExp(`(?<![0-9])\\+?${number.slice(1)}(?![0-9])`);
    const [messages, suppressed] = await this.driver.transaction(async (tx) => {
      const erased = await tx.run(
        `UPDATE messages SET recipient = NULL, recipient_lookup = NULL WHERE recipient_lookup IN (${list(lookups.length)})`,
        lookups,
      );
      // The OTP record keeps the send (its country and keyed prefix still count for the guard), not the number.
      await tx.run(
        `UPDATE otp_events SET number = NULL, number_lookup = NULL WHERE number_lookup IN (${list(lookups.length)})`,
        lookups,
      );
      // The opt-out stays, found by its lookup value alone; rows listed before encryption hold the number as
      // their lookup, so they move to the keyed hash when one is configured.
      const listed = await tx.run(
        `UPDATE suppressions SET number = NULL WHERE lookup IN (${list(lookups.length)})`,
        lookups,
      );
      const lookup = this.personal.lookup(number);
      if (lookup !== number && listed > 0) {
        await tx.run(
          'DELETE FROM suppressions WHERE lookup = ? AND EXISTS (SELECT 1 FROM suppressions s WHERE s.lookup = ?)',
          [number, lookup],
        );
        await tx.run('UPDATE suppressions SET lookup = ? WHERE lookup = ?', [lookup, number]);
      }
      return [erased, listed > 0] as const;
    });
    let rejectedEvents = 0;
    for (let after = 0; ;) {
      const batch = await this.driver.read((tx) =>
        tx.all<{ id: number; event: string }>(
          `SELECT id, event FROM rejected_events WHERE id > ? ORDER BY id LIMIT ${BATCH}`,
          [after],
        ),
      );
      const holding = batch.filter((r) => mentions.test(this.personal.open(r.event, REJECTED_CONTEXT)));
      if (holding.length > 0)
        rejectedEvents += await this.driver.transaction((tx) =>
          tx.run(
            `DELETE FROM rejected_events WHERE id IN (${list(holding.length)})`,
            holding.map((r) => Number(r.id)),
          ),
        );
      if (batch.length < BATCH) break;
      after = Number(batch.at(-1)!.id);
    }
    return {
      messages,
      rejectedEvents,
      suppressed,
      suppressionKeptAs: this.personal.encrypted ? 'keyed-hash' : 'number',
    };
  }

  async takeRequest(
    budget: string,
    settings: BudgetSettings,
    kind: RequestClass,
    now = Date.now(),
  ): Promise<BudgetAnswer> {
    checkText('budget', budget, 200);
    return this.driver.transaction(async (tx) => {
      const full = fullBucket(settings, now);
      await tx.run(
        'INSERT INTO request_budgets (name, tokens, refilled_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
        [budget, full.tokens, full.refilledAt],
      );
      // SQLite's transaction already holds the only write lock; PostgreSQL takers queue on the row.
      const lock = this.driver.dialect === 'postgres' ? ' FOR UPDATE' : '';
      const [row] = await tx.all<{ tokens: number | string; refilled_at: number | string }>(
        `SELECT tokens, refilled_at FROM request_budgets WHERE name = ?${lock}`,
        [budget],
      );
      const before = { tokens: Number(row!.tokens), refilledAt: Number(row!.refilled_at) };
      const { bucket, answer } = takeRequest(before, settings, kind, now);
      if (answer.granted)
        await tx.run('UPDATE request_budgets SET tokens = ?, refilled_at = ? WHERE name = ?', [
          bucket.tokens,
          bucket.refilledAt,
          budget,
        ]);
      return answer;
    });
  }

  close(): Promise<void> {
    return this.driver.close();
  }

  private numberOf(row: MessageRow): string | null {
    return row.recipient === null ? null : this.personal.open(row.recipient, row.provider_message_id);
  }
}

/** A message's events of one body, reduced to what one upsert writes: its first final and last other status. */
interface FoldedEvents {
  providerMessageId: string;
  final?: { status: FinalStatus; timestamp: string; eventId: string | null };
  last?: { status: string; timestamp: string };
}

function foldEvents(events: readonly StatusEventRecord[]): FoldedEvents[] {
  const byId = new Map<string, FoldedEvents>();
  for (const e of events) {
    const folded = byId.get(e.providerMessageId) ?? { providerMessageId: e.providerMessageId };
    if (isFinalStatus(e.status))
      folded.final ??= { status: e.status, timestamp: e.timestamp, eventId: e.eventId ?? null };
    else folded.last = { status: e.status, timestamp: e.timestamp };
    byId.set(e.providerMessageId, folded);
  }
  return [...byId.values()].sort((a, b) => compare(a.providerMessageId, b.providerMessageId));
}

async function finalsOf(tx: Executor, ids: readonly string[]): Promise<FinalOutcome[]> {
  const finals: FinalOutcome[] = [];
  for (const batch of chunks(ids)) {
    const found = await tx.all<MessageRow>(
      `SELECT provider_message_id, final_status, final_timestamp, final_event_id FROM messages
       WHERE final_status IS NOT NULL AND provider_message_id IN (${list(batch.length)})
       ORDER BY provider_message_id`,
      batch,
    );
    finals.push(...found.flatMap(outcomeOf));
  }
  return finals;
}

function outcomeOf(
  row: Pick<MessageRow, 'provider_message_id' | 'final_status' | 'final_timestamp' | 'final_event_id'>,
) {
  if (row.final_status === null || !isFinalStatus(row.final_status)) return [];
  return [
    {
      providerMessageId: row.provider_message_id,
      status: row.final_status,
      timestamp: row.final_timestamp!,
      eventId: row.final_event_id,
    },
  ];
}

function rows(count: number, columns: number): string {
  const row = `(${list(columns)})`;
  return Array.from({ length: count }, () => row).join(', ');
}

function list(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}

/** Without duplicates (one statement may not upsert a row twice), in id order (see the invariant above). */
function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()].sort((a, b) => compare(key(a), key(b)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function encodeCursor(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  if (!/^[\w-]{1,400}$/.test(cursor)) throw new StoreInputError('invalid cursor');
  return Buffer.from(cursor, 'base64url').toString('utf8');
}

function checkText(name: string, value: unknown, max: number): asserts value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw new StoreInputError(`${name} must be a string of 1 to ${max} characters`);
}

function checkId(id: unknown): asserts id is string {
  checkText('providerMessageId', id, MAX_ID_LENGTH);
}

function checkSent(m: SentMessage): void {
  checkId(m?.providerMessageId);
  if (m.number !== undefined) checkText('number', m.number, 50);
  if (m.campaignKey !== undefined) checkText('campaignKey', m.campaignKey, 1000);
}

function checkEvent(e: StatusEventRecord): void {
  checkId(e?.providerMessageId);
  checkText('status', e.status, 50);
  checkText('timestamp', e.timestamp, 100);
  if (e.eventId !== undefined) checkText('eventId', e.eventId, 1000);
}

function checkNumber(number: unknown): asserts number is string {
  if (typeof number !== 'string' || !/^\+[1-9]\d{6,14}$/.test(number))
    throw new StoreInputError('a number must be in international format with a leading +, e.g. +2348012345678');
}

function checkSuppression(entry: SuppressionEntry): void {
  checkNumber(entry?.number);
  if (entry.reason !== undefined) checkText('reason', entry.reason, 200);
}

function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new StoreInputError('limit must be an integer from 1 to 1000');
}

function checkDate(name: string, date: Date): number {
  const ms = date instanceof Date ? date.getTime() : NaN;
  if (!Number.isFinite(ms)) throw new StoreInputError(`${name} must be a valid Date`);
  return ms;
}
