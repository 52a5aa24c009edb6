/**
 * Controls for testing against the sandbox (admin API and console): force the outcome of a number's next
 * messages, pause and resume an account's webhook deliveries (a receiver outage), redeliver a delivery,
 * and reset an account's traffic.
 */
import type { Db } from './db.js';
import type { MessageOutcome } from './carrier.js';

export interface ForcedOutcome {
  /** digits only */
  mobile_number: string;
  outcome: MessageOutcome;
  /** sent → final state, instead of the carrier's timing; null keeps it. */
  final_delay_ms: number | null;
}

export function forcedOutcomeFor(db: Db, digits: string): ForcedOutcome | undefined {
  return db.prepare('SELECT * FROM forced_outcomes WHERE mobile_number = ?').get(digits) as ForcedOutcome | undefined;
}

export function listForcedOutcomes(db: Db): ForcedOutcome[] {
  return db.prepare('SELECT * FROM forced_outcomes ORDER BY mobile_number').all() as ForcedOutcome[];
}

export function setForcedOutcome(db: Db, forced: ForcedOutcome): void {
  db.prepare(
    `INSERT INTO forced_outcomes (mobile_number, outcome, final_delay_ms) VALUES (?, ?, ?)
     ON CONFLICT (mobile_number) DO UPDATE SET outcome = excluded.outcome, final_delay_ms = excluded.final_delay_ms`,
  ).run(forced.mobile_number, forced.outcome, forced.final_delay_ms);
}

/** Returns false when the number had no forced outcome. */
export function clearForcedOutcome(db: Db, digits: string): boolean {
  return db.prepare('DELETE FROM forced_outcomes WHERE mobile_number = ?').run(digits).changes > 0;
}

export function setWebhooksPaused(db: Db, accountId: string, paused: boolean): void {
  db.prepare('UPDATE accounts SET webhooks_paused = ? WHERE id = ?').run(paused ? 1 : 0, accountId);
}

/**
 * Sends a delivery again as soon as the dispatcher gets to it, whatever its state; its attempts go on being
 * counted (and recorded) after the earlier ones. False when the account has no such delivery.
 */
export function redeliver(db: Db, accountId: string, deliveryId: string, now: number): boolean {
  return (
    db
      .prepare(
        `UPDATE deliveries SET state = 'pending', next_attempt_at = ?, updated_at = ?
          WHERE id = ? AND webhook_id IN (SELECT id FROM webhooks WHERE account_id = ? AND deleted_at IS NULL)`,
      )
      .run(now, now, deliveryId, accountId).changes > 0
  );
}

/**
 * Forgets an account's traffic: messages, calls, campaigns, OTPs, lookups, pending carrier moves, webhook
 * deliveries and their attempts, idempotency keys (callers also drop its recorded refusals). Keeps the
 * account, its tokens, settings, webhook endpoints and wallet (balance and ledger), so a test can start
 * again without setting anything up.
 */
export function resetAccount(db: Db, accountId: string): void {
  db.transaction(() => {
    const webhooks = `SELECT id FROM webhooks WHERE account_id = @a`;
    const deliveries = `SELECT id FROM deliveries WHERE webhook_id IN (${webhooks})`;
    const subjects = `SELECT id FROM messages WHERE account_id = @a UNION ALL SELECT id FROM voice_calls WHERE account_id = @a`;
    const statements = [
      `DELETE FROM delivery_attempts WHERE delivery_id IN (${deliveries})`,
      `DELETE FROM delivery_messages WHERE delivery_id IN (${deliveries})`,
      `DELETE FROM deliveries WHERE webhook_id IN (${webhooks})`,
      `DELETE FROM batch_items WHERE webhook_id IN (${webhooks})`,
      `DELETE FROM transitions WHERE subject_id IN (${subjects})`,
      `DELETE FROM status_history WHERE subject_id IN (${subjects})`,
      'DELETE FROM otps WHERE account_id = @a',
      'DELETE FROM messages WHERE account_id = @a',
      'DELETE FROM voice_calls WHERE account_id = @a',
      'DELETE FROM campaigns WHERE account_id = @a',
      'DELETE FROM lookups WHERE account_id = @a',
      'DELETE FROM idempotency_keys WHERE account_id = @a',
    ];
    for (const sql of statements) db.prepare(sql).run({ a: accountId });
  })();
}
