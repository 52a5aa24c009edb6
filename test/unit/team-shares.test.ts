/**
 * The teams' fair share of a token's bulk requests (src/store/team-shares.ts through takeBulkRequest), over a
 * simulated clock: each team keeps several requests waiting, as its campaign's chunks in flight across
 * workers do, and asks again when told; a granted request is followed by the team's next one shortly after.
 */
import { describe, expect, it } from 'vitest';
import {
  type BucketState,
  budgetSettings,
  fullBucket,
  takeBulkRequest,
  takeRequest,
} from '../../src/store/request-bucket.js';
import { MAX_CREDIT, type TeamStanding, teamTurn } from '../../src/store/team-shares.js';

const LIMIT = 120;
/** How long after a grant the team's next request (the next chunk activity) asks. */
const NEXT_REQUEST_MS = 40;

interface SimTeam {
  name: string;
  /** Requests waiting at once (one per worker process at the head of the team's line). */
  heads: number;
  /** The weight at `now` (weights may change while the teams send). */
  weight: (now: number) => number;
  /** When the team starts and stops asking. */
  from?: number;
  until?: number;
}

interface SimResult {
  /** Grant times per team, and of interactive requests. */
  grants: Map<string, number[]>;
  /** How long each interactive request waited for its grant. */
  interactiveWaits: number[];
}

/** Runs the teams (and an interactive request every `interactiveEveryMs`) against one budget for `ms`. */
function simulate(teams: SimTeam[], ms: number, interactiveEveryMs?: number): SimResult {
  const settings = budgetSettings(LIMIT);
  let bucket: BucketState = fullBucket(settings, 0);
  const standings = new Map<string, TeamStanding>();
  type Head = { team?: SimTeam; at: number; since: number };
  const heads: Head[] = teams.flatMap((team) =>
    Array.from({ length: team.heads }, (_, i) => ({ team, at: (team.from ?? 0) + i * 7, since: 0 })),
  );
  if (interactiveEveryMs)
    for (let at = interactiveEveryMs; at < ms; at += interactiveEveryMs) heads.push({ at, since: at });
  const grants = new Map<string, number[]>([...teams.map((t) => [t.name, []] as [string, number[]]), ['', []]]);
  const interactiveWaits: number[] = [];
  for (;;) {
    heads.sort((a, b) => a.at - b.at);
    const head = heads[0];
    if (!head || head.at >= ms) break;
    const { team, at } = head;
    if (team && at >= (team.until ?? Infinity)) {
      heads.shift();
      continue;
    }
    let granted: boolean;
    let waitMs = 0;
    if (team) {
      const taken = takeBulkRequest({ bucket, standings }, settings, { team: team.name, weight: team.weight(at) }, at);
      standings.set(team.name, taken.standing);
      ({ bucket } = taken);
      granted = taken.answer.granted;
      if (!taken.answer.granted) waitMs = taken.answer.waitMs;
    } else {
      const taken = takeRequest(bucket, settings, 'interactive', at);
      ({ bucket } = taken);
      granted = taken.answer.granted;
      if (!taken.answer.granted) waitMs = taken.answer.waitMs;
    }
    if (!granted) {
      head.at = at + waitMs;
      continue;
    }
    grants.get(team?.name ?? '')!.push(at);
    if (team) head.at = at + NEXT_REQUEST_MS;
    else {
      interactiveWaits.push(at - head.since);
      heads.shift();
    }
  }
  return { grants, interactiveWaits };
}

const between = (times: number[], from: number, to: number) => times.filter((t) => t >= from && t < to).length;
const shareOf = (result: SimResult, team: string, from: number, to: number) => {
  const counts = [...result.grants].filter(([name]) => name !== '').map(([, t]) => between(t, from, to));
  return between(result.grants.get(team)!, from, to) / counts.reduce((a, b) => a + b, 0);
};
const perMinute = (times: number[], from: number, to: number) => (between(times, from, to) * 60_000) / (to - from);

const MINUTE = 60_000;
const heavy = (name: string, weight: (now: number) => number, heads = 3): SimTeam => ({ name, heads, weight });

describe('team shares of the bulk requests', () => {
  it('splits the requests evenly between two teams of weight 1, and 3:1 at weights 3 and 1', () => {
    const even = simulate([heavy('clinic', () => 1), heavy('marketing', () => 1)], 5 * MINUTE);
    expect(shareOf(even, 'clinic', MINUTE, 5 * MINUTE)).toBeCloseTo(0.5, 2);
    const weighted = simulate([heavy('clinic', () => 3), heavy('marketing', () => 1)], 5 * MINUTE);
    expect(shareOf(weighted, 'clinic', MINUTE, 5 * MINUTE)).toBeCloseTo(0.75, 2);
    // Sharing costs the token nothing: together they still take what a lone team would.
    const both = [...weighted.grants.values()].flat();
    expect(perMinute(both, MINUTE, 5 * MINUTE)).toBeGreaterThanOrEqual(0.95 * LIMIT);
  });

  it('gives a team alone every bulk request the reserve leaves, whatever its weight', () => {
    const alone = simulate([heavy('clinic', () => 0.1, 1)], 3 * MINUTE);
    expect(perMinute(alone.grants.get('clinic')!, MINUTE, 3 * MINUTE)).toBeGreaterThanOrEqual(0.95 * LIMIT);
  });

  it('keeps the interactive requests first: nearly all granted at once, none after more than one refill', () => {
    const settings = budgetSettings(LIMIT);
    const result = simulate([heavy('clinic', () => 3), heavy('marketing', () => 1)], 3 * MINUTE, 5_000);
    expect(result.interactiveWaits.length).toBeGreaterThan(30);
    expect(Math.max(...result.interactiveWaits)).toBeLessThanOrEqual(Math.ceil(1 / settings.perMs));
    // They take the reserve the campaigns leave: nearly all at once.
    const atOnce = result.interactiveWaits.filter((wait) => wait === 0).length;
    expect(atOnce / result.interactiveWaits.length).toBeGreaterThanOrEqual(0.9);
    expect(shareOf(result, 'clinic', MINUTE, 3 * MINUTE)).toBeCloseTo(0.75, 1);
  });

  it('moves the shares when the weights change while the teams send', () => {
    const clinicWeight = (now: number) => (now < 3 * MINUTE ? 1 : 3);
    const result = simulate([heavy('clinic', clinicWeight), heavy('marketing', () => 1)], 6 * MINUTE);
    expect(shareOf(result, 'clinic', MINUTE, 3 * MINUTE)).toBeCloseTo(0.5, 2);
    expect(shareOf(result, 'clinic', 3.5 * MINUTE, 6 * MINUTE)).toBeCloseTo(0.75, 2);
  });

  it('starts a team that joins late level with the team sending: no debt from the time it was away', () => {
    const late = { ...heavy('clinic', () => 1), from: 3 * MINUTE };
    const result = simulate([late, heavy('marketing', () => 1)], 6 * MINUTE);
    // Not the whole token while it catches up on the 3 minutes marketing sent alone.
    expect(shareOf(result, 'clinic', 3 * MINUTE, 3.5 * MINUTE)).toBeLessThan(0.55);
    expect(shareOf(result, 'clinic', 3.5 * MINUTE, 6 * MINUTE)).toBeCloseTo(0.5, 2);
  });

  it('gives a team that stops its turns to the others within seconds', () => {
    const leaving = { ...heavy('clinic', () => 3), until: 2 * MINUTE };
    const result = simulate([leaving, heavy('marketing', () => 1)], 4 * MINUTE);
    const marketing = result.grants.get('marketing')!;
    expect(perMinute(marketing, 2 * MINUTE + 5_000, 4 * MINUTE)).toBeGreaterThanOrEqual(0.95 * LIMIT);
  });
});

describe('teamTurn', () => {
  const window = 2_500;
  const standing = (served: number, askedAt: number, refusedAt: number | null = null) => ({
    served,
    askedAt,
    refusedAt,
  });

  it('is the turn of the team that served least among those waiting; teams not waiting do not hold it back', () => {
    const standings = new Map([
      ['clinic', standing(10, 990, 990)],
      ['marketing', standing(9, 995, 995)],
    ]);
    expect(teamTurn(standings, 'clinic', 1000, window).turn).toBe(false);
    expect(teamTurn(standings, 'marketing', 1000, window).turn).toBe(true);
    // Marketing was granted last (it no longer waits): clinic may take the token.
    standings.set('marketing', standing(9, 995, null));
    expect(teamTurn(standings, 'clinic', 1000, window).turn).toBe(true);
  });

  it('keeps a team asking without waiting at most MAX_CREDIT behind, and resets a returning team to the others', () => {
    const standings = new Map([
      ['clinic', standing(1, 990)],
      ['marketing', standing(50, 995, 995)],
    ]);
    expect(teamTurn(standings, 'clinic', 1000, window).standing.served).toBe(50 - MAX_CREDIT);
    // Away longer than the window: level with those asking, whether it was ahead or behind.
    standings.set('clinic', standing(500, 990 - window));
    expect(teamTurn(standings, 'clinic', 1000, window).standing.served).toBe(50);
    expect(teamTurn(new Map(), 'clinic', 1000, window).standing).toEqual(standing(0, 1000));
  });
});
