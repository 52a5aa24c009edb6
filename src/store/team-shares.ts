/**
 * Fair shares of the bulk requests between teams on one token. Each team has a virtual time, `served`: its
 * bulk requests so far, each counted 1/weight. A team may take a bulk token only while no other team that is
 * waiting for one has served less, so while several teams wait, each gets its weight's share; a team alone
 * (or beside teams that do not wait) takes every token. A team that starts asking, after a pause or for the
 * first time, starts level with the teams that ask, so time alone earns it no debt and no credit; one that asks
 * without waiting keeps at most MAX_CREDIT ahead of them. Weights apply from the next grant, so a change while
 * teams send moves their shares from then on.
 */
import type { BudgetSettings } from './types.js';

/** One team's standing in a budget. */
export interface TeamStanding {
  /** Bulk requests granted, each counted 1/weight (the weight when it was granted). */
  served: number;
  /** When it last asked, ms since the epoch. */
  askedAt: number;
  /** When it was last refused, while it has not been granted since (it still waits); else null. */
  refusedAt: number | null;
}

/** How far (in served units) a team that asks without waiting may stay behind those that ask: a small burst. */
export const MAX_CREDIT = 2;

/**
 * How long after its last ask a team still counts as asking: a waiting request asks again at the latest when
 * the bucket holds a bulk request's tokens (at most `capacity` refills), so this covers it with a second to spare.
 */
export function askingWindowMs(settings: BudgetSettings): number {
  return Math.ceil((settings.capacity + 1) / settings.perMs) + 1000;
}

/** The standing `team` asks with, and whether it is its turn, given the others' standings. */
export function teamTurn(
  standings: ReadonlyMap<string, TeamStanding>,
  team: string,
  now: number,
  windowMs: number,
): { standing: TeamStanding; turn: boolean } {
  const recent = (at: number | null) => at !== null && at >= now - windowMs;
  const others = [...standings].filter(([name]) => name !== team).map(([, standing]) => standing);
  const asking = others.filter((o) => recent(o.askedAt)).map((o) => o.served);
  const waiting = others.filter((o) => recent(o.refusedAt)).map((o) => o.served);
  const own = standings.get(team);
  const level = asking.length ? Math.min(...asking) : undefined;
  let served = own?.served ?? level ?? 0;
  if (level !== undefined) served = own && recent(own.askedAt) ? Math.max(served, level - MAX_CREDIT) : level;
  const turn = waiting.every((other) => served <= other);
  return { standing: { served, askedAt: now, refusedAt: own?.refusedAt ?? null }, turn };
}
