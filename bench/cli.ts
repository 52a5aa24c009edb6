/**
 * How long `msgflow --version` takes to answer by each way a checkout runs it (the launcher, `npm run msgflow
 * --`, `npx msgflow`), beside the bare starts of Node and npm (the ceilings) and the sources run without the
 * build (tsx compiling each module at each start). The median of a few runs each, after one
 * warm-up run (which also makes the build if the sources changed). Needs no Temporal server.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { type BenchResult, type BenchRow, percentile, round, type StandaloneBenchmark } from './harness.js';
import { endedChildrenCpuSeconds } from './processes.js';

const ROOT = resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.MSGFLOW_BENCH_CLI_RUNS ?? 7);
const TARGET_MS = 1_000;
const run = promisify(execFile);
/** The environment minus what `npm run bench` passes its children (npm_config_*, npm_lifecycle_*, …). */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

interface Case {
  name: string;
  command: string;
  args: string[];
  /** A ceiling (nothing of msgflow runs), or a way of running msgflow held to the target. */
  ceiling?: true;
  /** msgflow without the build, for comparison: not held to the target. */
  reference?: true;
}

const NODE = process.execPath;
const CASES: Case[] = [
  { name: 'ceiling: node -e 0 (bare Node start)', command: NODE, args: ['-e', '0'], ceiling: true },
  { name: 'ceiling: npm --version (bare npm start)', command: 'npm', args: ['--version'], ceiling: true },
  { name: 'node bin/msgflow.js --version', command: NODE, args: ['bin/msgflow.js', '--version'] },
  { name: 'npm run msgflow -- --version', command: 'npm', args: ['run', '--silent', 'msgflow', '--', '--version'] },
  { name: 'npx msgflow --version', command: 'npx', args: ['msgflow', '--version'] },
  {
    name: 'without the build: node --import tsx src/cli/main.ts --version',
    command: NODE,
    args: ['--import', 'tsx', 'src/cli/main.ts', '--version'],
    reference: true,
  },
];

interface Timing {
  ms: number;
  /** CPU time of the command and every process it ran: what a busy machine's load does not stretch. */
  cpuMs: number;
}

async function timeOnce({ command, args }: Case): Promise<Timing> {
  const cpuBefore = endedChildrenCpuSeconds() ?? Number.NaN;
  const started = performance.now();
  await run(command, args, { cwd: ROOT, env });
  const ms = performance.now() - started;
  return { ms, cpuMs: ((endedChildrenCpuSeconds() ?? Number.NaN) - cpuBefore) * 1000 };
}

/** Each case's runs, interleaved (one of each, RUNS times), so load that comes and goes weighs on all alike. */
async function measure(): Promise<Map<Case, Timing[]>> {
  const times = new Map<Case, Timing[]>(CASES.map((c) => [c, []]));
  for (const c of CASES) await timeOnce(c);
  for (let i = 0; i < RUNS; i++) for (const c of CASES) times.get(c)!.push(await timeOnce(c));
  return times;
}

export const cliBenchmark: StandaloneBenchmark = {
  name: 'cli',
  standalone: true,
  async run({ log }): Promise<BenchResult> {
    const version = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    log(`msgflow ${version}: ${CASES.length} cases, ${RUNS} runs each after one warm-up`);
    const times = await measure();
    const runs = (c: Case, figure: keyof Timing) => times.get(c)!.map((timing) => timing[figure]);
    const bareNode = percentile(runs(CASES[0]!, 'ms'), 50);
    const rows: BenchRow[] = CASES.map((c) => {
      const ms = runs(c, 'ms');
      const median = percentile(ms, 50);
      const cpu = percentile(runs(c, 'cpuMs'), 50);
      return {
        case: c.name,
        'median ms': round(median, 0),
        'min ms': round(Math.min(...ms), 0),
        'max ms': round(Math.max(...ms), 0),
        'over bare Node ms': round(median - bareNode, 0),
        'median CPU ms': Number.isNaN(cpu) ? '' : round(cpu, 0),
        target:
          c.ceiling || c.reference ? '' : median < TARGET_MS ? `< ${TARGET_MS} ms: met` : `< ${TARGET_MS} ms: NOT met`,
      };
    });
    return {
      title: `msgflow --version from a checkout, median of ${RUNS} runs`,
      rows,
      notes: [
        `load average at the end: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      ],
    };
  },
};
