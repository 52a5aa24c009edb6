/**
 * Retention: rows of messages with no activity for `retentionMs` are deleted, hourly, never while a workflow
 * still waits for them. A waiter unreleased for twice the retention (and at least 62 days, beyond any wait
 * window) belongs to a workflow that ended without releasing it, e.g. terminated, and keeps nothing.
 * Rejected events and the OTP record older than the cutoff go with them, and a campaign's kept input (for its
 * retry) once none of its messages is left.
 */
import { BATCH, list, type StoreContext } from './sql.js';
import { type MessageStore, type PurgeResult, StoreInputError } from './types.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionOptions {
  retentionMs: number;
  /** How often to purge (default hourly). */
  everyMs?: number;
  onPurged?(result: PurgeResult): void;
  onError?(error: unknown): void;
}

/** Purges now and then every `everyMs`; returns a function that stops it. */
export function startRetention(store: Pick<MessageStore, 'purge'>, options: RetentionOptions): () => void {
  const { retentionMs, everyMs = 60 * 60 * 1000, onPurged, onError } = options;
  const purge = () => {
    const now = Date.now();
    store
      .purge({
        olderThan: new Date(now - retentionMs),
        abandonWaitersRegisteredBefore: new Date(now - Math.max(2 * retentionMs, 62 * DAY_MS)),
      })
      .then(onPurged, onError);
  };
  purge();
  const timer = setInterval(purge, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The store's `purge`: what `startRetention` calls. */
export function retention({ driver }: StoreContext): Pick<MessageStore, 'purge'> {
  return {
    async purge({ olderThan, abandonWaitersRegisteredBefore }) {
      const cutoff = checkDate('olderThan', olderThan);
      // No cutoff: every unreleased waiter keeps its message (registered_at >= -1 always holds).
      const abandoned = abandonWaitersRegisteredBefore
        ? checkDate('abandonWaitersRegisteredBefore', abandonWaitersRegisteredBefore)
        : -1;
      let messages = 0;
      // Small transactions: retention must not hold row locks the ingress is waiting for. Candidates are
      // locked in id order like everywhere else (PostgreSQL; SQLite's writers are serial anyway), then
      // deleted only if still old and unawaited: a registration that got there first bumped last_seen_at.
      const lock = driver.dialect === 'postgres' ? 'FOR UPDATE' : '';
      const unawaited = `NOT EXISTS (SELECT 1 FROM waiters w WHERE w.provider_message_id = messages.provider_message_id
                           AND w.released_at IS NULL AND w.registered_at >= ?)`;
      for (;;) {
        const batch = await driver.transaction(async (tx) => {
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
      const rejectedEvents = await driver.transaction((tx) =>
        tx.run('DELETE FROM rejected_events WHERE received_at < ?', [cutoff]),
      );
      const otpEvents = await driver.transaction((tx) => tx.run('DELETE FROM otp_events WHERE at < ?', [cutoff]));
      await purgeCampaignInputs(driver, cutoff);
      return { messages, rejectedEvents, otpEvents };
    },
  };
}

/** A campaign's kept input and rows go once it is older than the cutoff and none of its messages is left. */
async function purgeCampaignInputs(driver: StoreContext['driver'], cutoff: number): Promise<void> {
  const noMessages = (table: string) =>
    `NOT EXISTS (SELECT 1 FROM messages m WHERE m.campaign_key = ${table}.campaign_key)`;
  await driver.transaction(async (tx) => {
    await tx.run(`DELETE FROM campaign_inputs WHERE kept_at < ? AND ${noMessages('campaign_inputs')}`, [cutoff]);
    await tx.run(
      `DELETE FROM campaign_rows WHERE ${noMessages('campaign_rows')}
         AND NOT EXISTS (SELECT 1 FROM campaign_inputs i WHERE i.campaign_key = campaign_rows.campaign_key)`,
    );
  });
}

function checkDate(name: string, date: Date): number {
  const ms = date instanceof Date ? date.getTime() : NaN;
  if (!Number.isFinite(ms)) throw new StoreInputError(`${name} must be a valid Date`);
  return ms;
}
