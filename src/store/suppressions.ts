/**
 * Suppressions and erasure: the opt-out list (found by a number's lookup value, the number itself sealed)
 * and erasing one person's number from everything the store keeps.
 */
import { REJECTED_CONTEXT } from './reports.js';
import {
  BATCH,
  checkLimit,
  checkNumber,
  checkText,
  chunks,
  decodeCursor,
  encodeCursor,
  list,
  rows,
  type StoreContext,
  uniqueBy,
} from './sql.js';
import { type MessageStore, StoreInputError, type SuppressionEntry } from './types.js';

export type SuppressionsAndErasure = Pick<
  MessageStore,
  'suppress' | 'unsuppress' | 'suppressedAmong' | 'suppressions' | 'eraseNumber'
>;

export function suppressionsAndErasure(context: StoreContext): SuppressionsAndErasure {
  return {
    ...suppressionWrites(context),
    ...suppressionReads(context),
    ...numberErasure(context),
  };
}

/** Adding numbers to the opt-out list and taking them off. */
function suppressionWrites({ driver, personal }: StoreContext): Pick<MessageStore, 'suppress' | 'unsuppress'> {
  return {
    async suppress(entries) {
      entries.forEach(checkSuppression);
      const unique = uniqueBy(
        entries.map((e) => ({ ...e, lookup: personal.lookup(e.number) })),
        (e) => e.lookup,
      );
      if (unique.length === 0) return 0;
      const now = Date.now();
      return driver.transaction(async (tx) => {
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
            fresh.flatMap((e) => [e.lookup, personal.seal(e.number, e.lookup), e.reason ?? null, now]),
          );
        }
        return added;
      });
    },

    async unsuppress(numbers) {
      numbers.forEach((n) => checkNumber(n));
      const lookups = [...new Set(numbers.flatMap((n) => personal.lookups(n)))];
      if (lookups.length === 0) return 0;
      return driver.transaction(async (tx) => {
        let removed = 0;
        for (const batch of chunks(lookups))
          removed += await tx.run(`DELETE FROM suppressions WHERE lookup IN (${list(batch.length)})`, batch);
        return removed;
      });
    },
  };
}

/** Which numbers are listed, and the list page by page. */
function suppressionReads({ driver, personal }: StoreContext): Pick<MessageStore, 'suppressedAmong' | 'suppressions'> {
  return {
    async suppressedAmong(numbers) {
      numbers.forEach((n) => checkNumber(n));
      const byLookup = new Map<string, string>();
      for (const number of new Set(numbers))
        for (const lookup of personal.lookups(number)) byLookup.set(lookup, number);
      if (byLookup.size === 0) return [];
      const found = new Set<string>();
      await driver.read(async (tx) => {
        for (const batch of chunks([...byLookup.keys()])) {
          const listed = await tx.all<{ lookup: string }>(
            `SELECT lookup FROM suppressions WHERE lookup IN (${list(batch.length)})`,
            batch,
          );
          for (const r of listed) found.add(byLookup.get(r.lookup)!);
        }
      });
      return [...new Set(numbers)].filter((n) => found.has(n));
    },

    async suppressions({ limit, after }) {
      checkLimit(limit);
      const from = after === undefined ? null : decodeCursor(after);
      const separator = from?.indexOf(':') ?? -1;
      const fromTime = from === null ? null : Number(from.slice(0, separator));
      if (from !== null && (separator < 1 || !Number.isSafeInteger(fromTime)))
        throw new StoreInputError('invalid cursor');
      const found = await driver.read((tx) =>
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
          number: r.number === null ? null : personal.open(r.number, r.lookup),
          reason: r.reason,
          addedAt: Number(r.added_at),
        })),
        next: found.length > limit && last ? encodeCursor(`${Number(last.added_at)}:${last.lookup}`) : null,
      };
    },
  };
}

/** Erasing one person's number from every table. */
function numberErasure({ driver, personal }: StoreContext): Pick<MessageStore, 'eraseNumber'> {
  return {
    async eraseNumber(number) {
      checkNumber(number);
      const lookups = personal.lookups(number);
      const mentions = new RegExp(`(?<![0-9])\\+?${number.slice(1)}(?![0-9])`);
      const [messages, suppressed] = await driver.transaction(async (tx) => {
        const erased = await tx.run(
          `UPDATE messages SET recipient = NULL, recipient_lookup = NULL WHERE recipient_lookup IN (${list(lookups.length)})`,
          lookups,
        );
        // A personal campaign's row of the person's fields goes with the number (its retry then skips them).
        await tx.run(`DELETE FROM campaign_rows WHERE recipient_lookup IN (${list(lookups.length)})`, lookups);
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
        const lookup = personal.lookup(number);
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
        const batch = await driver.read((tx) =>
          tx.all<{ id: number; event: string }>(
            `SELECT id, event FROM rejected_events WHERE id > ? ORDER BY id LIMIT ${BATCH}`,
            [after],
          ),
        );
        const holding = batch.filter((r) => mentions.test(personal.open(r.event, REJECTED_CONTEXT)));
        if (holding.length > 0)
          rejectedEvents += await driver.transaction((tx) =>
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
        suppressionKeptAs: personal.encrypted ? 'keyed-hash' : 'number',
      };
    },
  };
}

function checkSuppression(entry: SuppressionEntry): void {
  checkNumber(entry?.number);
  if (entry.reason !== undefined) checkText('reason', entry.reason, 200);
}
