/**
 * Waiters and outcomes: which workflows wait for which provider message, and the first final state the
 * ingress recorded for it.
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
import type { Executor } from './driver.js';
import {
  checkId,
  checkText,
  chunks,
  compare,
  firstFinalStands,
  isPending,
  list,
  type MessageRow,
  outcomeOf,
  rows,
  type StoreContext,
  uniqueBy,
} from './sql.js';
import type { FinalOutcome, MessageStore, SentMessage, StatusEventRecord, WaiterOutcomes } from './types.js';

export type WaitersAndOutcomes = Pick<MessageStore, 'register' | 'recordEvents' | 'outcomes' | 'release'>;

export function waitersAndOutcomes(context: StoreContext): WaitersAndOutcomes {
  return {
    ...registrations(context),
    ...eventRecording(context),
    ...outcomesAndRelease(context),
  };
}

/** Registering who waits for which message; it answers with the outcomes known already. */
function registrations({ driver, personal, hooks }: StoreContext): Pick<MessageStore, 'register'> {
  return {
    async register(workflowId, messages) {
      checkText('workflowId', workflowId, 1000);
      messages.forEach(checkSent);
      const unique = uniqueBy(messages, (m) => m.providerMessageId);
      if (unique.length === 0) return [];
      const ids = unique.map((m) => m.providerMessageId);
      const now = Date.now();
      // Only a traced send has a traceparent to keep: an untraced one writes the statement it always did.
      const traced = unique.some((m) => m.traceParent !== undefined);
      return driver.transaction(async (tx) => {
        for (const batch of chunks(unique)) {
          await tx.run(
            `INSERT INTO messages (provider_message_id, recipient, recipient_lookup, campaign_key, first_seen_at, last_seen_at${traced ? ', trace_parent' : ''})
             VALUES ${rows(batch.length, traced ? 7 : 6)}
             ON CONFLICT (provider_message_id) DO UPDATE SET
               recipient = COALESCE(messages.recipient, excluded.recipient),
               recipient_lookup = COALESCE(messages.recipient_lookup, excluded.recipient_lookup),
               campaign_key = COALESCE(messages.campaign_key, excluded.campaign_key),
               ${traced ? 'trace_parent = COALESCE(messages.trace_parent, excluded.trace_parent),' : ''}
               last_seen_at = excluded.last_seen_at`,
            batch.flatMap((m) => [
              m.providerMessageId,
              m.number ? personal.seal(m.number, m.providerMessageId) : null,
              m.number ? personal.lookup(m.number) : null,
              m.campaignKey ?? null,
              now,
              now,
              ...(traced ? [m.traceParent ?? null] : []),
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
        await hooks.afterWrite?.('register');
        const finals = await finalsOf(tx, ids);
        await markToldOnRegistration(tx, workflowId, finals, now);
        return finals;
      });
    },
  };
}

/** Recording status events as they arrive; the first final state per message wins. */
function eventRecording({ driver, hooks }: StoreContext): Pick<MessageStore, 'recordEvents'> {
  return {
    async recordEvents(events) {
      events.forEach(checkEvent);
      const folded = foldEvents(events);
      if (folded.length === 0) return [];
      const now = Date.now();
      return driver.transaction(async (tx) => {
        const finals: FinalOutcome[] = [];
        const traceParents = new Map<string, string>();
        for (const batch of chunks(folded)) {
          const written = await tx.all<MessageRow>(
            `INSERT INTO messages (provider_message_id, final_status, final_timestamp, final_event_id,
               last_status, last_status_timestamp, first_seen_at, last_seen_at, final_recorded_at, final_source)
             VALUES ${rows(batch.length, 10)}
             ON CONFLICT (provider_message_id) DO UPDATE SET
               ${firstFinalStands(['final_timestamp', 'final_event_id', 'final_recorded_at', 'final_source'])},
               last_status = COALESCE(excluded.last_status, messages.last_status),
               last_status_timestamp = CASE WHEN excluded.last_status IS NULL THEN messages.last_status_timestamp ELSE excluded.last_status_timestamp END,
               last_seen_at = excluded.last_seen_at
             RETURNING provider_message_id, final_status, final_timestamp, final_event_id, final_source, trace_parent`,
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
              e.final ? 'webhook' : null,
            ]),
          );
          finals.push(...written.flatMap(outcomeOf));
          for (const row of written) if (row.trace_parent) traceParents.set(row.provider_message_id, row.trace_parent);
        }
        await hooks.afterWrite?.('recordEvents');
        if (finals.length === 0) return [];
        const byId = new Map(finals.map((f) => [f.providerMessageId, f]));
        const waiting = new Map<string, { outcomes: FinalOutcome[]; traceParents: Set<string> }>();
        for (const batch of chunks([...byId.keys()])) {
          const found = await tx.all<{ provider_message_id: string; workflow_id: string }>(
            `SELECT provider_message_id, workflow_id FROM waiters
             WHERE released_at IS NULL AND provider_message_id IN (${list(batch.length)})
             ORDER BY workflow_id, provider_message_id`,
            batch,
          );
          await markUntold(tx, found, now);
          for (const w of found) {
            const waiter = waiting.get(w.workflow_id) ?? { outcomes: [], traceParents: new Set<string>() };
            waiter.outcomes.push(byId.get(w.provider_message_id)!);
            const traceParent = traceParents.get(w.provider_message_id);
            if (traceParent) waiter.traceParents.add(traceParent);
            waiting.set(w.workflow_id, waiter);
          }
        }
        const pending = await stillPending(tx, [...waiting.keys()]);
        return [...waiting].map(([workflowId, { outcomes, traceParents }]): WaiterOutcomes => ({
          workflowId,
          outcomes,
          ...(traceParents.size ? { traceParents: [...traceParents] } : {}),
          ...(pending.has(workflowId) ? {} : { allFinal: true }),
        }));
      });
    },
  };
}

/** Reading messages' outcomes, and releasing a workflow's waits. */
function outcomesAndRelease({ driver }: StoreContext): Pick<MessageStore, 'outcomes' | 'release'> {
  return {
    async outcomes(providerMessageIds) {
      const ids = [...new Set(providerMessageIds)];
      ids.forEach(checkId);
      if (ids.length === 0) return [];
      return driver.read((tx) => finalsOf(tx, ids));
    },

    async release(workflowId, providerMessageIds) {
      checkText('workflowId', workflowId, 1000);
      const now = Date.now();
      if (!providerMessageIds)
        return driver.transaction((tx) =>
          tx.run(
            'UPDATE waiters SET released_at = ?, untold_since = NULL WHERE workflow_id = ? AND released_at IS NULL',
            [now, workflowId],
          ),
        );
      const ids = [...new Set(providerMessageIds)];
      ids.forEach(checkId);
      return driver.transaction(async (tx) => {
        let released = 0;
        for (const batch of chunks(ids))
          released += await tx.run(
            `UPDATE waiters SET released_at = ?, untold_since = NULL
             WHERE workflow_id = ? AND released_at IS NULL AND provider_message_id IN (${list(batch.length)})`,
            [now, workflowId, ...batch],
          );
        return released;
      });
    },
  };
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

/** A final state was recorded: the message's waiters not told nor released yet are untold, for the relay. */
export async function markUntold(
  tx: Executor,
  found: ReadonlyArray<{ provider_message_id: string }>,
  now: number,
): Promise<void> {
  const ids = [...new Set(found.map((w) => w.provider_message_id))];
  if (ids.length === 0) return;
  await tx.run(
    `UPDATE waiters SET untold_since = ?
     WHERE released_at IS NULL AND told_at IS NULL AND untold_since IS NULL AND provider_message_id IN (${list(ids.length)})`,
    [now, ...ids],
  );
}

/** Those of the workflows still waiting for a message without a final state (one index lookup each). */
async function stillPending(tx: Executor, workflowIds: readonly string[]): Promise<Set<string>> {
  const pending = new Set<string>();
  for (const workflowId of workflowIds) {
    const [row] = await tx.all(
      `SELECT 1 AS pending FROM waiters w WHERE w.workflow_id = ? AND ${isPending('w')} LIMIT 1`,
      [workflowId],
    );
    if (row) pending.add(workflowId);
  }
  return pending;
}

/** `register` hands the workflow its messages' known outcomes itself: they are told there, not by the relay. */
async function markToldOnRegistration(
  tx: Executor,
  workflowId: string,
  finals: readonly FinalOutcome[],
  now: number,
): Promise<void> {
  for (const batch of chunks(finals.map((f) => f.providerMessageId)))
    await tx.run(
      `UPDATE waiters SET told_at = ?, untold_since = NULL
       WHERE workflow_id = ? AND provider_message_id IN (${list(batch.length)})`,
      [now, workflowId, ...batch],
    );
}

async function finalsOf(tx: Executor, ids: readonly string[]): Promise<FinalOutcome[]> {
  const finals: FinalOutcome[] = [];
  for (const batch of chunks(ids)) {
    const found = await tx.all<MessageRow>(
      // Every column (final_source among them) rather than a list: a store opened at an older schema (the
      // upgrade tests) can still register.
      `SELECT * FROM messages
       WHERE final_status IS NOT NULL AND provider_message_id IN (${list(batch.length)})
       ORDER BY provider_message_id`,
      batch,
    );
    finals.push(...found.flatMap(outcomeOf));
  }
  return finals;
}

function checkSent(m: SentMessage): void {
  checkId(m?.providerMessageId);
  if (m.number !== undefined) checkText('number', m.number, 50);
  if (m.campaignKey !== undefined) checkText('campaignKey', m.campaignKey, 1000);
  if (m.traceParent !== undefined) checkText('traceParent', m.traceParent, 100);
}

function checkEvent(e: StatusEventRecord): void {
  checkId(e?.providerMessageId);
  checkText('status', e.status, 50);
  checkText('timestamp', e.timestamp, 100);
  if (e.eventId !== undefined) checkText('eventId', e.eventId, 1000);
}
