/**
 * What every benchmark shares: a measured figure is always printed beside a ceiling measured in the same
 * run on the same machine (these machines are noisy), as a table, and saved as JSON in bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';

export interface BenchContext {
  /** The Temporal server the run shares; `pid` when this run started it (for its CPU time). */
  temporal: { address: string; namespace: string; pid?: number };
  log(line: string): void;
}

export interface BenchRow {
  /** What was measured, e.g. "ingress, single events". */
  case: string;
  [metric: string]: string | number;
}

export interface BenchResult {
  title: string;
  rows: BenchRow[];
  notes?: string[];
}

export interface Benchmark {
  /** Short name, used for `npm run bench -- <name>` and the results file. */
  name: string;
  run(context: BenchContext): Promise<BenchResult>;
}

/** A benchmark that needs no Temporal server: `npm run bench -- <name>` starts none for it. */
export interface StandaloneBenchmark {
  name: string;
  standalone: true;
  run(context: Pick<BenchContext, 'log'>): Promise<BenchResult>;
}

export function percentile(sortedOrNot: number[], p: number): number {
  if (sortedOrNot.length === 0) return Number.NaN;
  const sorted = [...sortedOrNot].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** When the Temporal server recorded a history event (epoch ms). */
export function eventTimeMs(event: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }): number {
  return Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
}

export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function formatTable({ title, rows, notes = [] }: BenchResult): string {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => columns.map((c) => String(row[c] ?? '')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  return [
    `### ${title}`,
    '',
    line(columns),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...cells.map(line),
    ...(notes.length ? ['', ...notes.map((n) => `- ${n}`)] : []),
  ].join('\n');
}

export function saveResult(name: string, result: BenchResult, machine: Record<string, unknown>): string {
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${name}.json`, dir);
  writeFileSync(file, `${JSON.stringify({ name, at: new Date().toISOString(), machine, ...result }, null, 2)}\n`);
  return file.pathname;
}
