/**
 * The request budget kept in the store, on SQLite and on a real PostgreSQL server: takers in several store
 * connections at once share one bucket, so together they never get more than it holds.
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

  it('refuses a budget name it cannot keep', async () => {
    const store = await h.open(await h.freshLocation());
    await expect(store.takeRequest('', budgetSettings(60), 'bulk')).rejects.toThrow(StoreInputError);
  });
});
