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
import type { Executor } from './driver.js';
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
import { type Outbox, StoreInputError, type WaiterOutcomes } from './types.js';

interface UntoldRow extends Pick<
  MessageRow,
  'provider_message_id' | 'final_status' | 'final_timestamp' | 'final_event_id' | 'final_source' | 'trace_parent'
> {
  untold_since: number;
}

export function sqlOutbox(context: Pick<StoreContext, 'driver'>): Outbox {
  return { ...untoldReads(context), ...claimsAndTelling(context) };
}

/** What is untold: per workflow (for a relay's sweep) and in all (for the backlog gauges). */
function untoldReads({ driver }: Pick<StoreContext, 'driver'>): Pick<Outbox, 'untold' | 'backlog'> {
  return {
    async untold(limit) {
      checkCount('limit', limit);
      const found = await driver.read((tx) =>
        tx.all<{ workflow_id: string; untold: number | string; oldest: number | string }>(
          `SELECT workflow_id, COUNT(*) AS untold, MIN(untold_since) AS oldest FROM waiters
           WHERE untold_since IS NOT NULL GROUP BY workflow_id ORDER BY untold, oldest, workflow_id LIMIT ?`,
          [limit],
        ),
      );
      return found.map((r) => ({
        workflowId: r.workflow_id,
        untold: Number(r.untold),
        oldestUntoldAt: Number(r.oldest),
      }));
    },

    async backlog() {
      const [row] = await driver.read((tx) =>
        tx.all<{ untold: number | string; oldest: number | string | null }>(
          'SELECT COUNT(*) AS untold, MIN(untold_since) AS oldest FROM waiters WHERE untold_since IS NOT NULL',
        ),
      );
      return {
        untold: Number(row?.untold ?? 0),
        oldestUntoldAt: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest),
      };
    },
  };
}

/** A relay's leases: claiming workflows with their untold outcomes, marking them told, letting idle claims go. */
function claimsAndTelling({ driver }: Pick<StoreContext, 'driver'>): Pick<Outbox, 'claim' | 'finish' | 'forgetClaims'> {
  return {
    async claim(workflowIds, { owner, leaseMs, minIntervalMs, maxOutcomes, now = Date.now() }) {
      checkText('owner', owner, 200);
      checkCount('maxOutcomes', maxOutcomes);
      const ids = uniqueBy(workflowIds, (id) => id);
      ids.forEach((id) => checkText('workflowId', id, 1000));
      if (ids.length === 0) return { outcomes: [], held: [] };
      return driver.transaction(async (tx) => {
        const claimed: string[] = [];
        for (const batch of chunks(ids)) {
          // Free, and told long enough ago; or else, once, told early: it waits for nothing but what is untold.
          const won = await tx.all<{ workflow_id: string }>(
            `INSERT INTO relay_claims (workflow_id, owner, lease_until, last_told_at) VALUES ${rows(batch.length, 4)}
             ON CONFLICT (workflow_id) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until,
               flushed = CASE WHEN relay_claims.last_told_at <= ? THEN relay_claims.flushed ELSE 1 END
             WHERE relay_claims.lease_until < ? AND (relay_claims.last_told_at <= ? OR (relay_claims.flushed = 0
               AND NOT EXISTS (SELECT 1 FROM waiters p WHERE p.workflow_id = relay_claims.workflow_id AND ${isPending('p')})
               AND EXISTS (SELECT 1 FROM waiters u WHERE u.workflow_id = relay_claims.workflow_id
                 AND u.untold_since IS NOT NULL)))
             RETURNING workflow_id`,
            [...batch.flatMap((id) => [id, owner, now + leaseMs, 0]), now - minIntervalMs, now, now - minIntervalMs],
          );
          claimed.push(...won.map((r) => r.workflow_id));
        }
        const outcomes: WaiterOutcomes[] = [];
        const empty: string[] = [];
        for (const workflowId of claimed.sort()) {
          const found = await untoldOf(tx, workflowId, maxOutcomes);
          if (found) outcomes.push(found);
          else empty.push(workflowId);
        }
        await giveBack(tx, owner, empty);
        const won = new Set(claimed);
        return { outcomes, held: ids.filter((id) => !won.has(id)) };
      });
    },

    async finish(owner, { told, ended, failed }, now = Date.now()) {
      if (told.length + ended.length + failed.length === 0) return;
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
            `UPDATE relay_claims SET lease_until = 0, last_told_at = ?
             WHERE owner = ? AND workflow_id IN (${list(batch.length)})`,
            [now, owner, ...batch],
          );
        await giveBack(tx, owner, [...ended, ...failed]);
      });
    },

    async forgetClaims(before) {
      return driver.transaction((tx) =>
        tx.run('DELETE FROM relay_claims WHERE lease_until < ? AND last_told_at < ?', [before, before]),
      );
    },
  };
}

/** The workflow's untold outcomes, oldest first, at most `limit`; undefined when there is none. */
async function untoldOf(tx: Executor, workflowId: string, limit: number): Promise<WaiterOutcomes | undefined> {
  const found = await tx.all<UntoldRow>(
    `SELECT m.provider_message_id, m.final_status, m.final_timestamp, m.final_event_id, m.final_source, m.trace_parent,
            w.untold_since
     FROM waiters w JOIN messages m ON m.provider_message_id = w.provider_message_id
     WHERE w.workflow_id = ? AND w.untold_since IS NOT NULL
     ORDER BY w.untold_since, m.provider_message_id LIMIT ?`,
    [workflowId, limit],
  );
  const outcomes = found.flatMap(outcomeOf);
  if (outcomes.length === 0) return undefined;
  const traceParents = [...new Set(found.flatMap((r) => (r.trace_parent ? [r.trace_parent] : [])))];
  return { workflowId, outcomes, ...(traceParents.length ? { traceParents } : {}) };
}

/** Lets the claims go without changing when their workflows were last told. */
async function giveBack(tx: Executor, owner: string, workflowIds: readonly string[]): Promise<void> {
  for (const batch of chunks(workflowIds))
    await tx.run(`UPDATE relay_claims SET lease_until = 0 WHERE owner = ? AND workflow_id IN (${list(batch.length)})`, [
      owner,
      ...batch,
    ]);
}

function checkCount(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > 100_000)
    throw new StoreInputError(`${name} must be an integer from 1 to 100000`);
}
