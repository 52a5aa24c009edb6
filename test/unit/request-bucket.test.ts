/**
 * The request budget's rule: no span of the provider's minute (plus the arrival spread) hands out more than
 * the limit, interactive requests may take the reserve, bulk ones may not.
 */
import { describe, expect, it } from 'vitest';
import {
  ARRIVAL_SPREAD_MS,
  type BucketState,
  budgetSettings,
  fullBucket,
  type RequestClass,
  takeRequest,
} from '../../src/store/request-bucket.js';

/** Grants of requests asking at the given times (each asks again after its wait until granted). */
function grantTimes(limit: number, asks: Array<{ at: number; kind: RequestClass }>): number[] {
  const settings = budgetSettings(limit);
  let bucket: BucketState = fullBucket(settings, 0);
  const pending = asks.map((a) => ({ ...a }));
  const granted: number[] = [];
  while (pending.length > 0) {
    pending.sort((a, b) => a.at - b.at);
    const ask = pending.shift()!;
    const { bucket: next, answer } = takeRequest(bucket, settings, ask.kind, ask.at);
    bucket = next;
    if (answer.granted) granted.push(ask.at);
    else pending.push({ ...ask, at: ask.at + answer.waitMs });
  }
  return granted;
}

const mostInAnyMinute = (times: number[]) =>
  Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 60_000 + ARRIVAL_SPREAD_MS).length));

describe('request budget', () => {
  it.each([3, 20, 120, 600])('never hands out more than %i in any minute, however many ask', (limit) => {
    const asks = Array.from({ length: limit * 2 }, (_, i) => ({
      at: (i * 7) % 90_000,
      kind: (i % 5 === 0 ? 'interactive' : 'bulk') as RequestClass,
    }));
    const granted = grantTimes(limit, asks);
    expect(granted).toHaveLength(asks.length);
    expect(mostInAnyMinute(granted)).toBeLessThanOrEqual(limit);
    // Saturated, the bucket still hands out the limit each minute, less the reserve and the spread's share
    // (and the waits' rounding up to whole ms, here under 2%).
    const lastMinute = granted.filter((t) => t > granted.at(-1)! - 60_000).length;
    const { capacity } = budgetSettings(limit);
    expect(lastMinute).toBeGreaterThanOrEqual(
      Math.floor(0.98 * (limit - capacity) * (60_000 / (60_000 + ARRIVAL_SPREAD_MS))),
    );
  });

  it('keeps one request for interactive calls while bulk calls drain the bucket', () => {
    const settings = budgetSettings(120);
    let bucket = fullBucket(settings, 0);
    const bulk = () => takeRequest(bucket, settings, 'bulk', 0);
    let result = bulk();
    expect(result.answer.granted).toBe(true);
    bucket = result.bucket;
    result = bulk();
    expect(result.answer).toEqual({ granted: false, waitMs: expect.any(Number) });
    const interactive = takeRequest(bucket, settings, 'interactive', 0);
    expect(interactive.answer.granted).toBe(true);
    // Drained: an interactive call waits one request interval at most.
    const next = takeRequest(interactive.bucket, settings, 'interactive', 0).answer;
    expect(next.granted).toBe(false);
    expect(!next.granted && next.waitMs).toBeLessThanOrEqual(Math.ceil(1 / settings.perMs));
  });

  it('gives the bulk class the tokens interactive calls leave', () => {
    const bulkOnly = grantTimes(
      120,
      Array.from({ length: 240 }, () => ({ at: 0, kind: 'bulk' as const })),
    );
    // 240 bulk requests at the limit take about two minutes, not more.
    expect(bulkOnly.at(-1)!).toBeLessThan(2 * (60_000 + ARRIVAL_SPREAD_MS) + 2_000);
  });

  it('refuses a limit below one a minute', () => {
    expect(() => budgetSettings(0)).toThrow("the provider's rate limit must be at least 1 a minute (got 0)");
    expect(budgetSettings(1)).toMatchObject({ capacity: 1, reserve: 0 });
    expect(budgetSettings(2)).toMatchObject({ capacity: 1, reserve: 0 });
    expect(budgetSettings(3)).toMatchObject({ capacity: 2, reserve: 1 });
    // The bucket's minute is the provider's plus the half second a dispatch may be late.
    expect(budgetSettings(122).perMs).toBeCloseTo(120 / 60_500, 12);
    expect(() => budgetSettings(Number.NaN)).toThrow(RangeError);
  });

  it('adds nothing for a taker whose clock is behind the last one', () => {
    const settings = budgetSettings(60);
    const { bucket } = takeRequest({ tokens: 0.5, refilledAt: 10_000 }, settings, 'interactive', 9_000);
    expect(bucket).toEqual({ tokens: 0.5, refilledAt: 10_000 });
  });
});
