import { describe, expect, it } from 'vitest';
import {
  ALL_FAULT_KINDS,
  describeFault,
  FAULT_KINDS,
  faultsByKind,
  generateSchedule,
} from '../reliability/support/chaos/schedule.js';

const TEN_MINUTES = { runMs: 600_000, quietMs: 60_000 };

describe('the fault run schedule', () => {
  it('is the same for the same seed, and differs for another', () => {
    expect(generateSchedule(42, TEN_MINUTES)).toEqual(generateSchedule(42, TEN_MINUTES));
    expect(generateSchedule(43, TEN_MINUTES)).not.toEqual(generateSchedule(42, TEN_MINUTES));
  });

  it('spreads its faults over every kind and every target of a long run', () => {
    const faults = [1, 2, 3].flatMap((seed) => generateSchedule(seed, TEN_MINUTES));
    const counts = faultsByKind(faults);
    for (const kind of ALL_FAULT_KINDS) expect(counts[kind], kind).toBeGreaterThan(0);
    const targets = new Set(faults.map((f) => f.target));
    for (const kind of ALL_FAULT_KINDS) for (const target of FAULT_KINDS[kind]) expect(targets).toContain(target);
  });

  it('ends every fault before the quiet period, with no target struck twice at once and at most two active', () => {
    for (const seed of [1, 7, 99, 2024]) {
      const faults = generateSchedule(seed, TEN_MINUTES);
      expect(faults.length).toBeGreaterThan(30);
      for (const f of faults) {
        expect(f.atMs).toBeGreaterThanOrEqual(3_000);
        expect(f.atMs + f.durationMs).toBeLessThanOrEqual(TEN_MINUTES.runMs - TEN_MINUTES.quietMs);
        const overlapping = faults.filter((g) => g.atMs < f.atMs + f.durationMs && f.atMs < g.atMs + g.durationMs);
        expect(
          overlapping.filter((g) => g.target === f.target),
          describeFault(f),
        ).toHaveLength(1);
        const activeAtStart = faults.filter((g) => g.atMs <= f.atMs && f.atMs < g.atMs + g.durationMs);
        expect(activeAtStart.length, describeFault(f)).toBeLessThanOrEqual(2);
      }
      expect(faults.map((f) => f.atMs)).toEqual([...faults.map((f) => f.atMs)].sort((a, b) => a - b));
    }
  });

  it('draws only the kinds it is given, and nothing when the run is all quiet', () => {
    const faults = generateSchedule(5, { ...TEN_MINUTES, kinds: ['kill-worker', 'provider-5xx'] });
    expect(new Set(faults.map((f) => f.kind))).toEqual(new Set(['kill-worker', 'provider-5xx']));
    expect(generateSchedule(5, { runMs: 60_000, quietMs: 60_000 })).toEqual([]);
    expect(() => generateSchedule(5, { ...TEN_MINUTES, kinds: [] })).toThrow(/at least one/);
  });

  it('deploys exactly once in every run of a minute or more, in the first half of its fault period', () => {
    for (const seed of [1, 2, 3, 4, 5, 42, 2811]) {
      for (const runMs of [60_000, 90_000, 150_000]) {
        const quietMs = 30_000;
        const deploys = generateSchedule(seed, { runMs, quietMs }).filter((f) => f.kind === 'deploy');
        expect(deploys, `seed ${seed}, ${runMs} ms`).toHaveLength(1);
        const period = runMs - quietMs - 3_000;
        expect(deploys[0]!.atMs).toBeGreaterThanOrEqual(3_000 + 0.2 * period - 1);
        expect(deploys[0]!.atMs).toBeLessThanOrEqual(3_000 + 0.4 * period + 1);
        expect(deploys[0]!.target).toBe('deployment');
      }
    }
    // The kinds given without it: none.
    expect(generateSchedule(1, { runMs: 90_000, quietMs: 30_000, kinds: ['kill-worker'] })).not.toContainEqual(
      expect.objectContaining({ kind: 'deploy' }),
    );
  });

  it('keeps the deploys of a long run minutes apart, one at a time', () => {
    const thirtyMinutes = { runMs: 1_800_000, quietMs: 60_000 };
    let total = 0;
    for (const seed of [1, 2, 3, 2811]) {
      const deploys = generateSchedule(seed, thirtyMinutes).filter((f) => f.kind === 'deploy');
      total += deploys.length;
      for (let i = 1; i < deploys.length; i++)
        expect(deploys[i]!.atMs - deploys[i - 1]!.atMs, `seed ${seed}`).toBeGreaterThanOrEqual(180_000);
    }
    // The random draw adds some beside each run's planned one.
    expect(total).toBeGreaterThan(4);
  });

  it('describes a fault with its time, kind, target and duration', () => {
    expect(describeFault({ atMs: 12_345, kind: 'kill-worker', target: 'worker-1', durationMs: 4_000 })).toBe(
      '+12.3s kill-worker worker-1 for 4.0s',
    );
  });
});
