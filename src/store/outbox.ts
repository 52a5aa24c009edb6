/**
 * The outbox: final outcomes the store recorded for a waiting workflow and has not told it yet. A waiter row
 * is untold (`untold_since`) from the transaction that recorded its message's final state until a relay
 * marks it told (`told_at`), row by row: PostgreSQL commits land out of order, so no high-water mark would do.
 *
 * Relays (one per ingress, any number) share the work through `relay_claims`: a relay tells a workflow only
 * while it holds the workflow's lease, and only when the workflow was last told at least `minIntervalMs` ago
 * (or, once, sooner: when it waits for nothing but its untold outcomes, so a campaign's last ones need not
 * wait out the interval), so "told once at a time" and the rate rule hold across replicas; a crashed relay's
 * lease runs out and another takes the workflow over. Telling twice after a crash is allowed (a workflow
 * keeps the first final state it hears); never telling is not, so a row is marked told only after its signal
 * was accepted.
 */
import type { Driver, Executor } from './driver.js';
import {
  checkText,
  chunks,
  isPending,
  list,
  type MessageRow,
  outcomeOf,
  rows,
  type StoreContext,
  uniqueBy,
} from './sql.js';
import {
  type DeferredWorkflow,
  type Outbox,
  StoreInputError,
  type Telling,
  type UntoldPosition,
  type UntoldWorkflow,
  type WaiterOutcomes,
  type WorkflowRefusal,
} from './types.js';

interface UntoldRow extends Pick<
  MessageRow,
  'provider_message_id' | 'final_status' | 'final_timestamp' | 'final_event_id' | 'final_source' | 'trace_parent'
> {
  workflow_id: string;
  untold_since: number;
}

/** Untold outcomes a sweep's page reads at most per workflow it may return: its work is bounded by its limit. */
const ROWS_PER_WORKFLOW_READ = 10;

export function sqlOutbox(context: Pick<StoreContext, 'driver'>): Outbox {
  return { ...untoldReads(context), ...claimsAndTelling(context) };
}

/** What is untold: page by page, oldest first (a relay's sweep); in all (the backlog gauges); a workflow's refusal. */
function untoldReads({ driver }: Pick<StoreContext, 'driver'>): Pick<Outbox, 'untold' | 'backlog' | 'refusal'> {
  return {
    async untold({ limit, after, now = Date.now() }) {
      checkCount('limit', limit);
      if (after) checkText('after.workflowId', after.workflowId, 1000);
      const budget = limit * ROWS_PER_WORKFLOW_READ;
      const { scanned, resting } = await driver.read(async (tx) => {
        // One index range (waiters_untold_by_age) from the position: rows, not groups, so a page costs the same
        // whatever the backlog.
        const scanned = await tx.all<{ workflow_id: string; untold_since: number | string }>(
          `SELECT workflow_id, untold_since FROM waiters
           WHERE untold_since IS NOT NULL AND (untold_since > ? OR (untold_since = ? AND workflow_id > ?))
           ORDER BY untold_since, workflow_id LIMIT ?`,
          [after?.untoldSince ?? -1, after?.untoldSince ?? -1, after?.workflowId ?? '', budget],
        );
        const ids = [...new Set(scanned.map((r) => r.workflow_id))];
        const resting = ids.length
          ? await tx.all<{ workflow_id: string }>(
              `SELECT workflow_id FROM relay_claims WHERE retry_at > ? AND workflow_id IN (${list(ids.length)})`,
              [now, ...ids],
            )
          : [];
        return { scanned, resting: new Set(resting.map((r) => r.workflow_id)) };
      });
      const workflows: UntoldWorkflow[] = [];
      const seen = new Set<string>();
      let next: UntoldPosition | null = null;
      for (const row of scanned) {
        if (!seen.has(row.workflow_id)) {
          // A new workflow past the page's limit: the next page starts just before it.
          if (seen.size === limit) return { workflows, next };
          seen.add(row.workflow_id);
          if (!resting.has(row.workflow_id))
            workflows.push({ workflowId: row.workflow_id, oldestUntoldAt: Number(row.untold_since) });
        }
        next = { untoldSince: Number(row.untold_since), workflowId: row.workflow_id };
      }
      return { workflows, next: scanned.length === budget ? next : null };
    },

    async backlog() {
      const [row] = await driver.read((tx) =>
        tx.all<{ untold: number | string; oldest: number | string | null; refused: number | string }>(
          `SELECT COUNT(*) AS untold, MIN(untold_since) AS oldest,
             (SELECT COUNT(*) FROM relay_claims c WHERE c.refusals > 0
                AND EXISTS (SELECT 1 FROM waiters u WHERE u.workflow_id = c.workflow_id AND u.untold_since IS NOT NULL))
               AS refused
           FROM waiters WHERE untold_since IS NOT NULL`,
        ),
      );
      return {
        untold: Number(row?.untold ?? 0),
        oldestUntoldAt: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest),
        refusedWorkflows: Number(row?.refused ?? 0),
      };
    },

    async refusal(workflowId) {
      checkText('workflowId', workflowId, 1000);
      const [row] = await driver.read((tx) =>
        tx.all<RefusalColumns>('SELECT refusals, refusal, retry_at FROM relay_claims WHERE workflow_id = ?', [
          workflowId,
        ]),
      );
      return row ? refusalOf(row) : null;
    },
  };
}

/** A workflow's claim columns on why its outcomes wait (null where it has no claim). */
export interface RefusalColumns {
  refusals: number | string | null;
  refusal: string | null;
  retry_at: number | string | null;
}

/** The refusal a claim records: only while the workflow's last signal was refused. */
export function refusalOf(row: RefusalColumns): WorkflowRefusal | null {
  if (row.refusals === null || Number(row.refusals) === 0) return null;
  return { refusals: Number(row.refusals), reason: row.refusal, retryAt: Number(row.retry_at) };
}

/** A relay's leases: claiming workflows with their untold outcomes, marking them told, letting idle claims go. */
function claimsAndTelling({ driver }: Pick<StoreContext, 'driver'>): Pick<Outbox, 'claim' | 'finish' | 'forgetClaims'> {
  return {
    async claim(workflowIds, { owner, leaseMs, minIntervalMs, maxOutcomes, maxOutcomesInAll, now = Date.now() }) {
      checkText('owner', owner, 200);
      checkCount('maxOutcomes', maxOutcomes);
      if (maxOutcomesInAll !== undefined) checkCount('maxOutcomesInAll', maxOutcomesInAll);
      const ids = uniqueBy(workflowIds, (id) => id);
      ids.forEach((id) => checkText('workflowId', id, 1000));
      if (ids.length === 0) return { outcomes: [], held: [], deferred: [] };
      return driver.transaction(async (tx) => {
        const refusals = new Map<string, number>();
        for (const batch of chunks(ids)) {
          // Free, not waiting out a refusal, and told long enough ago; or else, once, told early: it waits for
          // nothing but what is untold.
          const won = await tx.all<{ workflow_id: string; refusals: number | string }>(
            `INSERT INTO relay_claims (workflow_id, owner, lease_until, last_told_at) VALUES ${rows(batch.length, 4)}
             ON CONFLICT (workflow_id) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until,
               flushed = CASE WHEN relay_claims.last_told_at <= ? THEN relay_claims.flushed ELSE 1 END
             WHERE relay_claims.lease_until < ? AND relay_claims.retry_at <= ?
               AND (relay_claims.last_told_at <= ? OR (relay_claims.flushed = 0
               AND NOT EXISTS (SELECT 1 FROM waiters p WHERE p.workflow_id = relay_claims.workflow_id AND ${isPending('p')})
               AND EXISTS (SELECT 1 FROM waiters u WHERE u.workflow_id = relay_claims.workflow_id
                 AND u.untold_since IS NOT NULL)))
             RETURNING workflow_id, refusals`,
            [
              ...batch.flatMap((id) => [id, owner, now + leaseMs, 0]),
              now - minIntervalMs,
              now,
              now,
              now - minIntervalMs,
            ],
          );
          for (const r of won) refusals.set(r.workflow_id, Number(r.refusals));
        }
        // In the order asked for: the budget keeps the first ones.
        const claimed = uniqueInOrder(workflowIds).filter((id) => refusals.has(id));
        const untold = await untoldOf(tx, claimed, maxOutcomes, maxOutcomesInAll ?? Number.MAX_SAFE_INTEGER);
        const outcomes = untold.outcomes.map((w) => ({ ...w, refusals: refusals.get(w.workflowId)! }));
        const found = new Set(outcomes.map((w) => w.workflowId));
        const deferred = new Set(untold.deferred.map((w) => w.workflowId));
        await giveBack(
          tx,
          owner,
          claimed.filter((id) => !found.has(id) && !deferred.has(id)),
        );
        await putOff(tx, owner, [...deferred], now - minIntervalMs);
        return { outcomes, held: ids.filter((id) => !refusals.has(id)), deferred: untold.deferred };
      });
    },

    finish: (owner, telling, now = Date.now()) => finish(driver, owner, telling, now),

    async forgetClaims(before) {
      // A refused workflow's claim is kept while it has something to tell: it holds the refusals and the backoff.
      return driver.transaction((tx) =>
        tx.run(
          `DELETE FROM relay_claims WHERE lease_until < ? AND last_told_at < ? AND retry_at < ?
             AND (refusals = 0 OR NOT EXISTS (SELECT 1 FROM waiters u
               WHERE u.workflow_id = relay_claims.workflow_id AND u.untold_since IS NOT NULL))`,
          [before, before, before],
        ),
      );
    },
  };
}

/** Marks what was told, releases ended workflows' waiters, counts refusals, and gives every claim back. */
async function finish(
  driver: Driver,
  owner: string,
  { told, ended, refused, failed }: Telling,
  now: number,
): Promise<void> {
  if (told.length + ended.length + refused.length + failed.length === 0) return;
  await driver.transaction(async (tx) => {
    // `untold_since + 0`: keeps SQLite's planner off the untold index, which it would scan whole for every
    // batch of ids (quadratic in a workflow's backlog), and on the primary key, one lookup per id.
    for (const { workflowId, providerMessageIds } of told)
      for (const batch of chunks([...providerMessageIds].sort()))
        await tx.run(
          `UPDATE waiters SET untold_since = NULL, told_at = ?
           WHERE workflow_id = ? AND untold_since + 0 IS NOT NULL AND provider_message_id IN (${list(batch.length)})`,
          [now, workflowId, ...batch],
        );
    for (const workflowId of ended)
      await tx.run(
        'UPDATE waiters SET released_at = ?, untold_since = NULL WHERE workflow_id = ? AND released_at IS NULL',
        [now, workflowId],
      );
    for (const batch of chunks(told.map((t) => t.workflowId)))
      await tx.run(
        `UPDATE relay_claims SET lease_until = 0, last_told_at = ?, refusals = 0, retry_at = 0, refusal = NULL
         WHERE owner = ? AND workflow_id IN (${list(batch.length)})`,
        [now, owner, ...batch],
      );
    for (const { workflowId, retryAt, reason } of refused)
      await tx.run(
        `UPDATE relay_claims SET lease_until = 0, refusals = refusals + 1, retry_at = ?, refusal = ?
         WHERE owner = ? AND workflow_id = ?`,
        [retryAt, reason.slice(0, 1000), owner, workflowId],
      );
    await giveBack(tx, owner, [...ended, ...failed]);
  });
}

/**
 * The workflows' untold outcomes, oldest first, at most `limit` each and `budget` in all, in one statement per
 * chunk of ids. The budget takes the workflows in the order given, whole: the first one that does not fit ends
 * it (the first with anything untold is always taken), and it and those after it are `deferred`, nothing read
 * of them but their counts. Those with nothing untold are left out of both (in a later chunk than the first
 * deferred one, all are deferred, uncounted).
 */
async function untoldOf(
  tx: Executor,
  workflowIds: readonly string[],
  limit: number,
  budget: number,
): Promise<{ outcomes: WaiterOutcomes[]; deferred: DeferredWorkflow[] }> {
  const outcomes: WaiterOutcomes[] = [];
  const deferred: DeferredWorkflow[] = [];
  let left = budget;
  for (const batch of chunks(workflowIds)) {
    if (deferred.length > 0) {
      deferred.push(...batch.map((workflowId) => ({ workflowId, untold: null })));
      continue;
    }
    // Each workflow's share (what it would be told) counted; the shares added up in the order given; only the
    // workflows kept have their rows numbered (oldest first) and their messages read.
    const found = await tx.all<UntoldRow & { kept: number | string; share: number | string }>(
      `WITH wanted (workflow_id, pos) AS (VALUES ${batch.map(() => '(?, CAST(? AS INTEGER))').join(', ')}),
       shares AS (
         SELECT wanted.workflow_id, wanted.pos, CASE WHEN COUNT(*) > ? THEN ? ELSE COUNT(*) END AS share
         FROM wanted JOIN waiters w ON w.workflow_id = wanted.workflow_id AND w.untold_since IS NOT NULL
         GROUP BY wanted.workflow_id, wanted.pos),
       decided AS (
         SELECT workflow_id, pos, share, CASE WHEN upto <= ? OR (rank = 1 AND ? = 1) THEN 1 ELSE 0 END AS kept
         FROM (SELECT workflow_id, pos, share, SUM(share) OVER (ORDER BY pos ROWS UNBOUNDED PRECEDING) AS upto,
                      ROW_NUMBER() OVER (ORDER BY pos) AS rank FROM shares) running),
       numbered AS (
         SELECT w.workflow_id, w.provider_message_id, w.untold_since,
                ROW_NUMBER() OVER (PARTITION BY w.workflow_id ORDER BY w.untold_since, w.provider_message_id) AS n
         FROM decided d JOIN waiters w ON d.kept = 1 AND w.workflow_id = d.workflow_id AND w.untold_since IS NOT NULL)
       SELECT d.workflow_id, d.kept, d.share, m.provider_message_id, m.final_status, m.final_timestamp,
              m.final_event_id, m.final_source, m.trace_parent, n.untold_since
       FROM decided d
       LEFT JOIN numbered n ON n.workflow_id = d.workflow_id AND n.n <= ?
       LEFT JOIN messages m ON m.provider_message_id = n.provider_message_id
       ORDER BY d.pos, n.n`,
      [...batch.flatMap((id, i) => [id, i]), limit, limit, left, outcomes.length === 0 ? 1 : 0, limit],
    );
    const byWorkflow = new Map<string, UntoldRow[]>();
    for (const row of found) {
      if (Number(row.kept) === 0) {
        deferred.push({ workflowId: row.workflow_id, untold: Number(row.share) });
        continue;
      }
      const rows = byWorkflow.get(row.workflow_id);
      if (rows) rows.push(row);
      else byWorkflow.set(row.workflow_id, [row]);
    }
    for (const [workflowId, rows] of byWorkflow) {
      left -= rows.length;
      const told = rows.flatMap(outcomeOf);
      if (told.length === 0) continue;
      const traceParents = [...new Set(rows.flatMap((r) => (r.trace_parent ? [r.trace_parent] : [])))];
      outcomes.push({ workflowId, outcomes: told, ...(traceParents.length ? { traceParents } : {}) });
    }
  }
  return { outcomes, deferred };
}

/** Lets the claims go without changing when their workflows were last told. */
async function giveBack(tx: Executor, owner: string, workflowIds: readonly string[]): Promise<void> {
  for (const batch of chunks(workflowIds))
    await tx.run(`UPDATE relay_claims SET lease_until = 0 WHERE owner = ? AND workflow_id IN (${list(batch.length)})`, [
      owner,
      ...batch,
    ]);
}

/**
 * Lets claims go that this claim took but read nothing of (past its budget): as if never claimed, so one taken
 * early (within the interval) keeps its early signal for when it is claimed again.
 */
async function putOff(tx: Executor, owner: string, workflowIds: readonly string[], toldBefore: number): Promise<void> {
  for (const batch of chunks(workflowIds))
    await tx.run(
      `UPDATE relay_claims SET lease_until = 0, flushed = CASE WHEN last_told_at <= ? THEN flushed ELSE 0 END
       WHERE owner = ? AND workflow_id IN (${list(batch.length)})`,
      [toldBefore, owner, ...batch],
    );
}

function uniqueInOrder(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

function checkCount(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > 100_000)
    throw new StoreInputError(`${name} must be an integer from 1 to 100000`);
}
