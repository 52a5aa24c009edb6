/**
 * The provider token's request budget, shared by every worker through the store: a token bucket that never
 * lets more requests go than the provider's per-minute limit allows, whichever worker or path sends them.
 * Interactive requests (a person waits: OTP sends and checks, single sends) may take any token; bulk ones
 * (campaign chunks) only one beyond a reserve, so a login never waits for the campaign's requests, and the
 * campaign still gets every request logins leave. The worker's half of the rule, which request is of
 * which class and waiting for a token, is src/temporal/request-classes.ts.
 */

import { DISPATCH_JITTER_SECONDS } from '../definitions/task-queues.js';
import { checkText, type StoreContext } from './sql.js';
import type { BucketState, BudgetAnswer, BudgetSettings, MessageStore, RequestClass } from './types.js';

export type { BucketState, BudgetAnswer, BudgetSettings, RequestClass } from './types.js';

/**
 * A request may reach the provider this long after its token was taken: the bucket's minute is this much
 * longer than the provider's windows, so none of them sees more than the limit.
 */
export const ARRIVAL_SPREAD_MS = DISPATCH_JITTER_SECONDS * 1000;

/** The bucket for a limit of `ratePerMinute` requests per rolling or fixed minute. */
export function budgetSettings(ratePerMinute: number): BudgetSettings {
  if (!Number.isFinite(ratePerMinute) || ratePerMinute < 1)
    throw new RangeError(`the provider's rate limit must be at least 1 a minute (got ${ratePerMinute})`);
  // Any span of 60 s + spread hands out at most capacity + refill = the limit. Below 3 a minute there is no
  // room for a reserve: every request then takes its turn (and at 1 a minute, a window may see 2: the
  // provider's 429 is then waited out, as for a token shared with another service).
  const reserve = ratePerMinute >= 3 ? 1 : 0;
  const capacity = reserve + 1;
  return { capacity, reserve, perMs: Math.max(ratePerMinute - capacity, 1) / (60_000 + ARRIVAL_SPREAD_MS) };
}

/** A full bucket: what a budget starts as. */
export function fullBucket(settings: BudgetSettings, now: number): BucketState {
  return { tokens: settings.capacity, refilledAt: now };
}

/** The bucket after one request of `kind` asks at `now`: one token fewer when granted, else how long to wait. */
export function takeRequest(
  bucket: BucketState,
  settings: BudgetSettings,
  kind: RequestClass,
  now: number,
): { bucket: BucketState; answer: BudgetAnswer } {
  // A clock behind the last taker's adds nothing (and takes nothing away).
  const elapsed = Math.max(0, now - bucket.refilledAt);
  const tokens = Math.min(settings.capacity, bucket.tokens + elapsed * settings.perMs);
  const needed = kind === 'interactive' ? 1 : 1 + settings.reserve;
  const refilled = { tokens, refilledAt: Math.max(now, bucket.refilledAt) };
  if (tokens >= needed) return { bucket: { ...refilled, tokens: tokens - 1 }, answer: { granted: true } };
  return { bucket: refilled, answer: { granted: false, waitMs: Math.ceil((needed - tokens) / settings.perMs) } };
}

/** The store's `takeRequest`: the bucket of each budget is one row, taken under its lock. */
export function requestBuckets({ driver }: StoreContext): Pick<MessageStore, 'takeRequest'> {
  return {
    async takeRequest(budget, settings, kind, now = Date.now()) {
      checkText('budget', budget, 200);
      return driver.transaction(async (tx) => {
        const full = fullBucket(settings, now);
        await tx.run(
          'INSERT INTO request_budgets (name, tokens, refilled_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
          [budget, full.tokens, full.refilledAt],
        );
        // SQLite's transaction already holds the only write lock; PostgreSQL takers queue on the row.
        const lock = driver.dialect === 'postgres' ? ' FOR UPDATE' : '';
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
    },
  };
}
