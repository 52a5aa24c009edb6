/**
 * The provider queue's declared rate: as close to the token's limit as the server's pacing allows, and never
 * so close that one of the provider's fixed one-minute windows could count more than the limit.
 */
import { describe, expect, it } from 'vitest';
import { providerQueueRate } from '../../src/definitions/task-queues.js';

/**
 * The most requests one provider window can see at `perSecond`: a minute at the rate, each partition's full
 * bucket (the server's burst: its per-partition rate rounded up, at least 1), and half a second of requests
 * dispatched before the window that reach the provider inside it.
 */
function worstWindow(perSecond: number, partitions: number): number {
  return 60 * perSecond + partitions * Math.max(Math.ceil(perSecond / partitions), 1) + 0.5 * perSecond;
}

describe('providerQueueRate', () => {
  it('declares 117 of the spec default 120 requests a minute on one partition', () => {
    expect(providerQueueRate(120) * 60).toBeCloseTo(117, 0);
    expect(providerQueueRate(120) * 60).toBeGreaterThanOrEqual(0.975 * 120);
  });

  it('leaves room for every partition’s burst when the queue has several', () => {
    expect(providerQueueRate(120, 4)).toBeLessThan(providerQueueRate(120, 1));
    expect(worstWindow(providerQueueRate(120, 4), 4)).toBeLessThanOrEqual(120 + 1e-9);
  });

  it('never lets a window count more than the limit, from 10/min to 100,000/min and 1 to 4 partitions', () => {
    for (const limit of [10, 59, 60, 61, 119, 120, 121, 600, 1_000, 6_000, 60_000, 100_000])
      for (const partitions of [1, 2, 3, 4]) {
        const rate = providerQueueRate(limit, partitions);
        expect(rate, `${limit}/min on ${partitions}`).toBeGreaterThan(0);
        expect(worstWindow(rate, partitions), `${limit}/min on ${partitions}`).toBeLessThanOrEqual(limit + 1e-9);
      }
  });

  it('paces a limit too small for that room at half the limit, rather than not at all', () => {
    expect(providerQueueRate(3, 2)).toBe(3 / 2 / 60);
    expect(providerQueueRate(1)).toBe(1 / 2 / 60);
  });
});
