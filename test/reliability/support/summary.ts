/**
 * Every reliability suite ends by printing what it did, in one greppable line, e.g.
 * `[reliability] webhook chaos: faults=1234 events=10000 lost=0 duplicates=0 (seed 42)`.
 * The counts are also returned so the test can assert on the same figures it printed.
 */
export type Counts = Record<string, number | string>;

export function printSummary(suite: string, counts: Counts, note?: string): string {
  const line = `[reliability] ${suite}: ${Object.entries(counts)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}${note ? ` (${note})` : ''}`;
  // Straight to stdout, so the line shows in CI logs however vitest reports console output.
  process.stdout.write(`${line}\n`);
  return line;
}

/** A small seeded generator (mulberry32): fault decisions can be replayed from the printed seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed from MSGFLOW_RELIABILITY_SEED, or a fresh one (printed in each summary). */
export function chosenSeed(): number {
  const fromEnv = Number(process.env.MSGFLOW_RELIABILITY_SEED);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Math.floor(Math.random() * 2 ** 31) + 1;
}
