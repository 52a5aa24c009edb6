/**
 * The OTP sessions' record in the message store: each send the guard judged (with its country, prefix and
 * decision) and each verified session, in one sequence. The guard's judgements and the verifications take
 * one lock (SQLite: its single writer; PostgreSQL: a transaction-scoped advisory lock), so the order of
 * `seq` is the order in which each judgement saw the others: the backtest replays exactly that.
 * Numbers are sealed and prefixes keyed like the messages' recipients when the store has a key ring.
 */
import type { OtpGuardRules } from '../api/otp-guard.js';
import type { Driver, Executor } from './driver.js';
import {
  judgeSend,
  type OtpGuardDecision,
  type OtpSendAttempt,
  placeOf,
  type WindowCount,
  windowsOf,
} from './otp-guard.js';
import type { RecordedOtpEvent } from './otp-guard-replay.js';
import type { PersonalData } from './personal-data.js';
import { type OtpEventStore, StoreInputError } from './types.js';

/** The advisory lock every guard judgement and verification takes on PostgreSQL (any constant will do). */
const GUARD_LOCK = 7_402_113;
const HISTORY_PAGE = 5000;

interface DecisionRow {
  verdict: string;
  reason: string | null;
  retry_after_seconds: number | string | null;
}

export class SqlOtpEvents implements OtpEventStore {
  constructor(
    private readonly driver: Driver,
    private readonly personal: PersonalData,
  ) {}

  /**
   * Judges one send by `rules` and records it. A send judged before (same key: an activity's retry) gets
   * the decision it got then.
   */
  async judgeSend(attempt: OtpSendAttempt, rules: OtpGuardRules): Promise<OtpGuardDecision> {
    checkAttempt(attempt);
    const place = placeOf(attempt.number, rules);
    const prefix = this.personal.lookup(place.prefix);
    return this.driver.transaction(async (tx) => {
      await this.lock(tx);
      const [earlier] = await tx.all<DecisionRow>(
        'SELECT verdict, reason, retry_after_seconds FROM otp_events WHERE event_key = ?',
        [attempt.key],
      );
      if (earlier) return { ...decisionOf(earlier), replayed: true };
      const windows = windowsOf(rules, attempt.at);
      const decision = judgeSend(rules, attempt, place, {
        prefix: windows.prefixSince === null ? null : await sendsSince(tx, 'prefix', prefix, windows.prefixSince),
        country:
          windows.countrySince === null ? null : await sendsSince(tx, 'country', place.country, windows.countrySince),
        conversion:
          windows.conversionSince === null ? null : await conversionSince(tx, prefix, windows.conversionSince),
      });
      await tx.run(
        `INSERT INTO otp_events (event_key, kind, session, purpose, number, number_lookup, country, prefix, at,
                                 verdict, reason, retry_after_seconds, channel)
         VALUES (?, 'send', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          attempt.key,
          attempt.session,
          attempt.purpose,
          this.personal.seal(attempt.number, attempt.key),
          this.personal.lookup(`+${attempt.number}`),
          place.country,
          prefix,
          attempt.at,
          decision.verdict,
          decision.reason,
          decision.retryAfterSeconds,
          attempt.channel ?? null,
        ],
      );
      return decision;
    });
  }

  /** What the provider charged for a send the guard let through, and the delivery's id when given. */
  async recordCost(key: string, cost: number, currency: string, deliveryId?: string): Promise<void> {
    if (deliveryId !== undefined && (deliveryId.length === 0 || deliveryId.length > 200))
      throw new StoreInputError('deliveryId must be a string of 1 to 200 characters');
    await this.driver.transaction((tx) =>
      tx.run(
        'UPDATE otp_events SET cost = ?, currency = ?, delivery_id = COALESCE(?, delivery_id) WHERE event_key = ?',
        [cost, currency, deliveryId ?? null, key],
      ),
    );
  }

  /** The session's code was verified (idempotent): its sends count as verified for the conversion rule. */
  async recordVerified(session: string, at: number): Promise<void> {
    if (session.length === 0 || session.length > 1000)
      throw new StoreInputError('session must be a string of 1 to 1000 characters');
    await this.driver.transaction(async (tx) => {
      await this.lock(tx);
      await tx.run(
        `INSERT INTO otp_events (event_key, kind, session, at) VALUES (?, 'verify', ?, ?)
         ON CONFLICT (event_key) DO NOTHING`,
        [`verify:${session}`, session, at],
      );
    });
  }

  /** Every event recorded at or after `since` (ms), in `seq` order, numbers in clear. */
  async history(since: number): Promise<RecordedOtpEvent[]> {
    const events: RecordedOtpEvent[] = [];
    for (let after = 0; ;) {
      const page = await this.driver.read((tx) =>
        tx.all<HistoryRow>(
          // The delivery's final state, a text's or a call's, from the message store (null while not known).
          `SELECT e.seq, e.event_key, e.kind, e.session, e.purpose, e.number, e.at, e.verdict, e.reason, e.cost,
                  e.currency, e.channel, m.final_status AS delivery_status
           FROM otp_events e LEFT JOIN messages m ON m.provider_message_id = e.delivery_id
           WHERE e.seq > ? AND e.at >= ? ORDER BY e.seq LIMIT ${HISTORY_PAGE}`,
          [after, since],
        ),
      );
      for (const row of page) events.push(this.eventOf(row));
      if (page.length < HISTORY_PAGE) return events;
      after = Number(page.at(-1)!.seq);
    }
  }

  private eventOf(row: HistoryRow): RecordedOtpEvent {
    return {
      seq: Number(row.seq),
      kind: row.kind,
      session: row.session,
      purpose: row.purpose,
      number: row.number === null ? null : this.personal.open(row.number, row.event_key),
      at: Number(row.at),
      verdict: row.verdict as RecordedOtpEvent['verdict'],
      reason: row.reason as RecordedOtpEvent['reason'],
      cost: row.cost === null ? null : Number(row.cost),
      currency: row.currency,
      channel: row.channel,
      deliveryStatus: row.delivery_status,
    };
  }

  private async lock(tx: Executor): Promise<void> {
    if (this.driver.dialect === 'postgres') await tx.all(`SELECT pg_advisory_xact_lock(${GUARD_LOCK})`);
  }
}

interface HistoryRow {
  seq: number | string;
  event_key: string;
  kind: 'send' | 'verify';
  session: string;
  purpose: string | null;
  number: string | null;
  at: number | string;
  verdict: string | null;
  reason: string | null;
  cost: number | string | null;
  currency: string | null;
  channel: 'sms' | 'voice' | null;
  delivery_status: string | null;
}

/** Sends of a prefix or country made after `since` that reached the provider. */
async function sendsSince(
  tx: Executor,
  column: 'prefix' | 'country',
  value: string,
  since: number,
): Promise<WindowCount> {
  const [row] = await tx.all<{ count: number | string; oldest: number | string | null }>(
    `SELECT COUNT(*) AS count, MIN(at) AS oldest FROM otp_events
     WHERE kind = 'send' AND ${column} = ? AND at > ? AND verdict <> 'blocked'`,
    [value, since],
  );
  return { count: Number(row!.count), oldestAt: row!.oldest === null ? null : Number(row!.oldest) };
}

async function conversionSince(tx: Executor, prefix: string, since: number) {
  const [row] = await tx.all<{
    count: number | string;
    oldest: number | string | null;
    verified: number | string | null;
  }>(
    `SELECT COUNT(*) AS count, MIN(at) AS oldest,
            SUM(CASE WHEN EXISTS (SELECT 1 FROM otp_events v WHERE v.kind = 'verify' AND v.session = s.session)
                THEN 1 ELSE 0 END) AS verified
     FROM otp_events s WHERE kind = 'send' AND prefix = ? AND at > ? AND verdict <> 'blocked'`,
    [prefix, since],
  );
  return {
    count: Number(row!.count),
    oldestAt: row!.oldest === null ? null : Number(row!.oldest),
    verified: Number(row!.verified ?? 0),
  };
}

function decisionOf(row: DecisionRow): OtpGuardDecision {
  return {
    verdict: row.verdict as OtpGuardDecision['verdict'],
    reason: row.reason as OtpGuardDecision['reason'],
    retryAfterSeconds: row.retry_after_seconds === null ? null : Number(row.retry_after_seconds),
  };
}

function checkAttempt(attempt: OtpSendAttempt): void {
  for (const field of ['key', 'session', 'purpose'] as const) {
    const value = attempt[field];
    if (typeof value !== 'string' || value.length === 0 || value.length > 1000)
      throw new StoreInputError(`${field} must be a string of 1 to 1000 characters`);
  }
  if (!/^[1-9]\d{6,14}$/.test(attempt.number))
    throw new StoreInputError('number must be international digits, e.g. 2348012345678');
  if (!Number.isSafeInteger(attempt.at)) throw new StoreInputError('at must be milliseconds since the epoch');
}
