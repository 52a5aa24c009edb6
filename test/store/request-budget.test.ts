/**
 * The request budget kept in the store, on SQLite and on a real PostgreSQL server: takers in several store
 * connections at once share one bucket, so together they never get more than it holds; the teams' standings
 * are kept in the store, so the team whose turn it is gets the token whichever connection asks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetSettings, StoreInputError } from '../../src/store/index.js';
import { type DialectHarness, DIALECTS, harness } from './dialects.js';

describe.each(DIALECTS)('request budget on %s', (dialect) => {
  let h: DialectHarness;
  beforeAll(async () => {
    h = await harness(dialect);
  });
  afterAll(() => h?.close());

  it('grants concurrent takers in several connections no more than the bucket holds', async () => {
    const location = await h.freshLocation();
    const stores = [await h.open(location), await h.open(location), await h.open(location)];
    const settings = budgetSettings(120);
    const now = 1_000_000; // one instant: no refill between the takes
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => stores[i % 3]!.takeRequest('provider', settings, 'interactive', now)),
    );
    expect(answers.filter((a) => a.granted)).toHaveLength(settings.capacity);
    const refused = answers.find((a) => !a.granted);
    expect(refused).toEqual({ granted: false, waitMs: expect.any(Number) });

    // A bulk taker leaves the reserve: after a refill of one token it is still refused.
    const oneTokenLater = now + Math.ceil(1 / settings.perMs);
    expect((await stores[0]!.takeRequest('provider', settings, 'bulk', oneTokenLater)).granted).toBe(false);
    expect((await stores[1]!.takeRequest('provider', settings, 'interactive', oneTokenLater)).granted).toBe(true);
    // Another budget (another token) is its own bucket.
    expect((await stores[2]!.takeRequest('other-token', settings, 'bulk', now)).granted).toBe(true);
  });

  it('gives bulk tokens by team and weight across connections: 3:1 while both wait, all to a team alone', async () => {
    const location = await h.freshLocation();
    const stores = [await h.open(location), await h.open(location)];
    const settings = budgetSettings(120);
    const interval = Math.ceil(1 / settings.perMs);
    const granted = { clinic: 0, marketing: 0 };
    // Both teams keep requests waiting, each in its own connection: at every refill both ask, and a team granted
    // asks again at once for its next request (refused until the next refill), as a worker's line of them does.
    for (let i = 1; i <= 40; i++) {
      const now = 1_000_000 + i * interval;
      for (const [n, team] of (['marketing', 'clinic'] as const).entries()) {
        const ask = { team, weight: team === 'clinic' ? 3 : 1 };
        if (!(await stores[n]!.takeRequest('provider', settings, ask, now)).granted) continue;
        granted[team]++;
        expect((await stores[n]!.takeRequest('provider', settings, ask, now)).granted).toBe(false);
      }
    }
    // One token a refill, three in four to clinic (the first to marketing, which asked first).
    expect(granted.clinic + granted.marketing).toBe(40);
    expect(Math.abs(granted.clinic - 30)).toBeLessThanOrEqual(1);
    // Marketing alone (clinic stopped asking): every token is its own.
    const later = 1_000_000 + 60 * interval;
    for (let i = 0; i < 10; i++)
      expect(
        (await stores[i % 2]!.takeRequest('provider', settings, { team: 'marketing', weight: 1 }, later + i * interval))
          .granted,
      ).toBe(true);
    // The interactive reserve still holds: with one token left, a bulk ask is refused and an interactive one granted.
    const now = later + 9 * interval;
    expect((await stores[0]!.takeRequest('provider', settings, { team: 'marketing', weight: 1 }, now)).granted).toBe(
      false,
    );
    expect((await stores[1]!.takeRequest('provider', settings, 'interactive', now)).granted).toBe(true);
  });

  it('refuses a budget name it cannot keep, and a team or weight it cannot use', async () => {
    const store = await h.open(await h.freshLocation());
    await expect(store.takeRequest('', budgetSettings(60), 'bulk')).rejects.toThrow(StoreInputError);
    const refusal = (team: string, weight: number) =>
      store.takeRequest('provider', budgetSettings(60), { team, weight }).catch((error: unknown) => error);
    const badTeam = await refusal('a b', 1);
    expect(badTeam).toBeInstanceOf(StoreInputError);
    expect((badTeam as Error).message).toBe('not a team name: "a b"');
    const badWeight = await refusal('clinic', 0);
    expect(badWeight).toBeInstanceOf(StoreInputError);
    expect((badWeight as Error).message).toBe("a team's weight must be above 0 (got 0)");
  });
});
