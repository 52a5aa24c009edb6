/**
 * `npm run bench [-- name…]`: runs the benchmarks (all, or those named) against one Temporal dev server,
 * prints each table and writes JSON to bench/results/. Benchmarks never run as part of `npm test`.
 */
import { cpus, totalmem } from 'node:os';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { ensureTemporal } from '../src/temporal/dev-server.js';
import { campaignBenchmark } from './campaign.js';
import { fairnessBenchmark } from './fairness.js';
import { nexusFairnessBenchmark } from './nexus-fairness.js';
import { cliBenchmark } from './cli.js';
import { targetFromEnv } from './campaign-target.js';
import { type Benchmark, formatTable, saveResult, type StandaloneBenchmark } from './harness.js';
import { ingressBenchmark } from './ingress.js';
import { outboxBenchmark } from './outbox.js';
import { otpBenchmark } from './otp.js';
import { otpFraudBenchmark } from './otp-fraud.js';
import { otpAtLimitBenchmark, otpBesideCampaignBenchmark } from './otp-load.js';
import { rateLimitBenchmark } from './rate-limit.js';
import { sandboxBenchmark } from './sandbox.js';
import { sendSmsBenchmark } from './send-sms.js';

/** Every benchmark, in the order they run. */
const BENCHMARKS: Array<Benchmark | StandaloneBenchmark> = [
  cliBenchmark,
  otpBenchmark,
  otpAtLimitBenchmark,
  otpBesideCampaignBenchmark,
  otpFraudBenchmark,
  sendSmsBenchmark,
  ingressBenchmark,
  outboxBenchmark,
  sandboxBenchmark,
  campaignBenchmark,
  rateLimitBenchmark,
  fairnessBenchmark,
  nexusFairnessBenchmark,
];

Runtime.install({ logger: new DefaultLogger('WARN') });
const wanted = process.argv.slice(2);
const selected = wanted.length ? BENCHMARKS.filter((b) => wanted.includes(b.name)) : BENCHMARKS;
const unknown = wanted.filter((w) => !BENCHMARKS.some((b) => b.name === w));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  process.exit(2);
}

const machine = {
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
};
// A target with a Temporal of its own (MSGFLOW_BENCH_TARGET=cluster) runs every benchmark on it. It starts when
// the first benchmark that needs one runs: `npm run bench -- cli` starts none.
const target = targetFromEnv();
const startTemporal = () =>
  target.startTemporal ? target.startTemporal((line) => console.log(`  ${line}`)) : ensureTemporal(process.env);
let temporal: Awaited<ReturnType<typeof startTemporal>> | undefined;
try {
  for (const benchmark of selected) {
    console.log(`\nrunning ${benchmark.name}…`);
    const log = (line: string) => console.log(`  ${line}`);
    const result =
      'standalone' in benchmark
        ? await benchmark.run({ log })
        : await benchmark.run({ temporal: (temporal ??= await startTemporal()), log });
    console.log(`\n${formatTable(result)}\n`);
    console.log(`saved ${saveResult(benchmark.name, result, machine)}`);
  }
} finally {
  await temporal?.stop();
}
