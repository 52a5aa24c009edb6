/**
 * The provider token's request budget, shared by every worker through the store: a token bucket that never
 * lets more requests go than the provider's per-minute limit allows, whichever worker or path sends them.
 * Interactive requests (a person waits: OTP sends and checks, single sends) may take any token; bulk ones
 * (campaign chunks) only one beyond a reserve, so a login never waits for the campaign's requests, and the
 * campaign still gets every request logins leave. Bulk requests are shared between teams by weight
 * (src/store/team-shares.ts). The worker's half of the rule, which request is of which class and team and
 * waiting for a token, is src/temporal/request-classes.ts.
 */

import { DEFAULT_TEAM, TeamName } from '../api/team-weights.js';
import { DISPATCH_JITTER_SECONDS } from '../definitions/task-queues.js';
import type { Executor } from './driver.js';
import { checkText, type StoreContext } from './sql.js';
import { askingWindowMs, teamTurn, type TeamStanding } from './team-shares.js';
import {
  type BucketState,
  type BudgetAnswer,
  type BudgetSettings,
  type BulkAsk,
  type MessageStore,
  type RequestClass,
  StoreInputError,
} from './types.js';

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

/**
 * One bulk request of `ask.team`: granted when it is the team's turn and the bucket leaves the reserve, else
 * how long to wait (on another team's turn at least one refill: its take leaves the next token). The team's
 * standing afterwards is to be kept whatever the answer: it says the team asks, and waits when refused.
 */
export function takeBulkRequest(
  { bucket, standings }: { bucket: BucketState; standings: ReadonlyMap<string, TeamStanding> },
  settings: BudgetSettings,
  ask: BulkAsk,
  now: number,
): { bucket: BucketState; standing: TeamStanding; answer: BudgetAnswer } {
  const { standing, turn } = teamTurn(standings, ask.team, now, askingWindowMs(settings));
  const taken = takeRequest(bucket, settings, 'bulk', now);
  if (turn && taken.answer.granted)
    return { ...taken, standing: { ...standing, served: standing.served + 1 / ask.weight, refusedAt: null } };
  const waitMs = taken.answer.granted ? 0 : taken.answer.waitMs;
  return {
    bucket,
    standing: { ...standing, refusedAt: now },
    answer: { granted: false, waitMs: turn ? waitMs : Math.max(waitMs, Math.ceil(1 / settings.perMs)) },
  };
}

/** The store's `takeRequest`: the bucket of each budget is one row, taken under its lock, beside its teams' rows. */
export function requestBuckets({ driver }: StoreContext): Pick<MessageStore, 'takeRequest'> {
  return {
    async takeRequest(budget, settings, ask, now = Date.now()) {
      checkText('budget', budget, 200);
      const bulk = ask === 'bulk' ? { team: DEFAULT_TEAM, weight: 1 } : ask === 'interactive' ? undefined : ask;
      if (bulk) checkBulkAsk(bulk);
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
        const { bucket, answer } = bulk
          ? await takeForTeam(tx, { budget, bucket: before, settings, ask: bulk, now })
          : takeRequest(before, settings, 'interactive', now);
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

interface TeamTake {
  budget: string;
  bucket: BucketState;
  settings: BudgetSettings;
  ask: BulkAsk;
  now: number;
}

async function takeForTeam(tx: Executor, { budget, bucket, settings, ask, now }: TeamTake) {
  const taken = takeBulkRequest({ bucket, standings: await teamStandings(tx, budget) }, settings, ask, now);
  await keepStanding(tx, budget, ask.team, taken.standing);
  return taken;
}

function checkBulkAsk({ team, weight }: BulkAsk): void {
  if (!TeamName.safeParse(team).success) throw new StoreInputError(`not a team name: ${JSON.stringify(team)}`);
  if (!(Number.isFinite(weight) && weight > 0))
    throw new StoreInputError(`a team's weight must be above 0 (got ${weight})`);
}

async function teamStandings(tx: Executor, budget: string): Promise<Map<string, TeamStanding>> {
  const rows = await tx.all<{
    team: string;
    served: number | string;
    asked_at: number | string;
    refused_at: number | string | null;
  }>('SELECT team, served, asked_at, refused_at FROM request_budget_teams WHERE budget = ?', [budget]);
  const standing = (r: (typeof rows)[number]): TeamStanding => ({
    served: Number(r.served),
    askedAt: Number(r.asked_at),
    refusedAt: r.refused_at === null ? null : Number(r.refused_at),
  });
  return new Map(rows.map((r) => [r.team, standing(r)]));
}

async function keepStanding(tx: Executor, budget: string, team: string, standing: TeamStanding): Promise<void> {
  await tx.run(
    'INSERT INTO request_budget_teams (budget, team, served, asked_at, refused_at) VALUES (?, ?, ?, ?, ?) ' +
      'ON CONFLICT (budget, team) DO UPDATE SET served = excluded.served, asked_at = excluded.asked_at, ' +
      'refused_at = excluded.refused_at',
    [budget, team, standing.served, standing.askedAt, standing.refusedAt],
  );
}
