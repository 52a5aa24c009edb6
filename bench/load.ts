/**
 * A bounded closed-loop load generator for the benchmarks: `total` operations, at most `concurrency` in
 * flight, each timed. Loopback only; it stops by itself when the count is done.
 */
import { performance } from 'node:perf_hooks';
import { percentile, round } from './harness.js';

/** A webhook body as the provider sends it: the raw JSON and its signature headers. */
export interface SignedBody {
  raw: string;
  headers: Record<string, string>;
}

export interface LoadResult {
  operations: number;
  seconds: number;
  perSecond: number;
  latenciesMs: number[];
  failures: number;
  firstFailure?: string;
}

export async function runLoad(
  total: number,
  concurrency: number,
  operation: (index: number) => Promise<void>,
): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  const started = performance.now();
  const lane = async () => {
    while (next < total) {
      const index = next++;
      const t0 = performance.now();
      try {
        await operation(index);
        latenciesMs.push(performance.now() - t0);
      } catch (error) {
        failures++;
        firstFailure ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, lane));
  const seconds = (performance.now() - started) / 1000;
  return { operations: total, seconds, perSecond: total / seconds, latenciesMs, failures, firstFailure };
}

/**
 * A ceiling measured before and after the case it frames, as one: both runs' operations, time and latencies,
 * the mean of their rates. Drift on a busy machine weighs on both sides alike.
 */
export function beforeAndAfter(before: LoadResult, after: LoadResult): LoadResult {
  return {
    ...before,
    operations: before.operations + after.operations,
    seconds: before.seconds + after.seconds,
    perSecond: (before.perSecond + after.perSecond) / 2,
    latenciesMs: [...before.latenciesMs, ...after.latenciesMs],
  };
}

/** p50/p99 of a run's latencies, rounded for a table. */
export function latencyColumns(result: LoadResult): { 'p50 ms': number; 'p99 ms': number } {
  return { 'p50 ms': round(percentile(result.latenciesMs, 50)), 'p99 ms': round(percentile(result.latenciesMs, 99)) };
}

/** Throws when a run had failures: a benchmark of failing requests measures nothing. */
export function assertClean(name: string, result: LoadResult): void {
  if (result.failures > 0)
    throw new Error(
      `${name}: ${result.failures} of ${result.operations} operations failed (first: ${result.firstFailure})`,
    );
}

/** Positive integer from the environment, or the default. */
export function sizeFromEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
