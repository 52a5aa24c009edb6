/** Retention purges at start and on its interval, with cutoffs from the retention, and stops when asked. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startRetention } from '../../src/store/retention.js';
import type { PurgeOptions } from '../../src/store/index.js';

const DAY = 24 * 60 * 60 * 1000;

describe('store retention', () => {
  afterEach(() => vi.useRealTimers());

  it('purges rows idle past the retention, abandons only very old waiters, and stops', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-23T00:00:00Z') });
    const calls: PurgeOptions[] = [];
    const purged: number[] = [];
    const stop = startRetention(
      { purge: async (options) => (calls.push(options), { messages: 3, rejectedEvents: 0, otpEvents: 0 }) },
      { retentionMs: 30 * DAY, everyMs: 60_000, onPurged: (r) => purged.push(r.messages) },
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.olderThan.toISOString()).toBe('2026-10-24T00:00:00.000Z');
    expect(calls[0]!.abandonWaitersRegisteredBefore!.toISOString()).toBe('2026-09-22T00:00:00.000Z');
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls).toHaveLength(3);
    stop();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(calls).toHaveLength(3);
    expect(purged).toEqual([3, 3, 3]);
  });

  it('purges hourly by default, and abandons waiters after twice a retention longer than 31 days', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-23T00:00:00Z') });
    const calls: PurgeOptions[] = [];
    const stop = startRetention(
      { purge: async (options) => (calls.push(options), { messages: 0, rejectedEvents: 0, otpEvents: 0 }) },
      { retentionMs: 40 * DAY },
    );
    await vi.advanceTimersByTimeAsync(59 * 60_000);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.abandonWaitersRegisteredBefore!.toISOString()).toBe('2026-09-04T00:00:00.000Z');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(2);
    stop();
  });

  it('reports a failed purge and keeps going', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let calls = 0;
    const stop = startRetention(
      {
        purge: async () => {
          calls++;
          throw new Error('database restarting');
        },
      },
      { retentionMs: DAY, everyMs: 1000, onError: (e) => errors.push(e) },
    );
    await vi.advanceTimersByTimeAsync(2500);
    stop();
    expect(calls).toBe(3);
    expect(errors).toHaveLength(3);
  });
});
