/**
 * Under the real limit: `smsCampaign`s against the provider's 120 requests/minute, with 3 msgflow workers on
 * the same task queues, each declaring the same provider-queue rate (the Temporal server enforces it across
 * all of them). Every provider request the workers make is counted at their HTTP client. The achieved rate
 * is measured over a fixed window after a warm-up, while the campaign still has plenty to send (so neither
 * its start nor its last requests weigh on the figure), then the campaign is cancelled: a sustained rate in
 * a few minutes, whatever the audience size needed to fill the limit for hours.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStack, type RunningStack } from '../src/stack.js';
import { type BenchWorkers, startBenchWorkers } from './workers.js';
import { type Benchmark, type BenchRow, round } from './harness.js';

/** The spec's default limit per token. */
const LIMIT_PER_MINUTE = 120;
const WORKERS = 3;
const WARMUP_SECONDS = Number(process.env.MSGFLOW_BENCH_RATE_LIMIT_WARMUP_S ?? 20);
const WINDOW_SECONDS = Number(process.env.MSGFLOW_BENCH_RATE_LIMIT_WINDOW_S ?? 120);
/** Recipients per request of the uniform-text campaign (see `uniform` below). */
const UNIFORM_CHUNK = Number(process.env.MSGFLOW_BENCH_RATE_LIMIT_UNIFORM_CHUNK ?? 20);
const IN_FLIGHT = process.env.MSGFLOW_BENCH_RATE_LIMIT_IN_FLIGHT
  ? Number(process.env.MSGFLOW_BENCH_RATE_LIMIT_IN_FLIGHT)
  : undefined;
const CASES = (process.env.MSGFLOW_BENCH_RATE_LIMIT_CASES ?? 'uniform,personalised').split(',');

interface RequestRecord {
  /** Start time (ms, performance clock). */
  at: number;
  status: number;
  path: string;
  /** The provider's X-RateLimit-Remaining in its answer: what the current one-minute window has left. */
  remaining: number | null;
}

/** The platform fetch, recording each request's start time and answer. */
function countingFetch(requests: RequestRecord[]): typeof fetch {
  return async (input, init) => {
    const at = performance.now();
    const response = await fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    const remaining = response.headers.get('x-ratelimit-remaining');
    requests.push({
      at,
      status: response.status,
      path: new URL(url).pathname,
      remaining: remaining === null ? null : Number(remaining),
    });
    return response;
  };
}

interface CampaignCase {
  name: string;
  /** Requests the campaign needs per recipient (1 for distinct texts, 1/chunk for a uniform text). */
  recipientsPerRequest: number;
  start(stack: RunningStack, recipients: string[]): ReturnType<RunningStack['msgflow']['startCampaign']>;
}

/**
 * Uniform text, in chunks of UNIFORM_CHUNK: the provider queue sees one activity per request whatever the
 * chunk size, so smaller chunks than the default 1,000 measure the same pacing without the sandbox having to
 * deliver 120,000 messages a minute on this machine.
 */
const uniform: CampaignCase = {
  name: 'uniform',
  recipientsPerRequest: UNIFORM_CHUNK,
  start: (stack, recipients) =>
    stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'Your March payment is due on Friday.',
      audience: { type: 'inline', recipients },
      chunkSize: UNIFORM_CHUNK,
      chunksInFlight: IN_FLIGHT,
    }),
};

/** A distinct text per recipient (a `{name}` template over a CSV of names): one request each. */
const personalised: CampaignCase = {
  name: 'personalised',
  recipientsPerRequest: 1,
  start: (stack, recipients) => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-rate-limit-'));
    const file = join(dir, 'audience.csv');
    writeFileSync(file, ['name,phone', ...recipients.map((number, i) => `Customer ${i + 1},${number}`), ''].join('\n'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'Hi {name}, your March payment is due on Friday.',
      audience: { type: 'file', path: file },
      chunksInFlight: IN_FLIGHT,
    });
  },
};
const cleanups: Array<() => void> = [];

interface Measured {
  row: BenchRow;
  byPath: string;
}

async function measure(
  stack: RunningStack,
  requests: RequestRecord[],
  campaignCase: CampaignCase,
  log: (line: string) => void,
): Promise<Measured> {
  // Enough requests for warm-up and window, with a third to spare so the window never sees the campaign end.
  const requestsNeeded = Math.ceil(((WARMUP_SECONDS + WINDOW_SECONDS) * LIMIT_PER_MINUTE * 4) / 3 / 60);
  const size = requestsNeeded * campaignCase.recipientsPerRequest;
  const prefix = `234${campaignCase.name === 'uniform' ? 81 : 90}`;
  const recipients = Array.from({ length: size }, (_, i) => `${prefix}${String(10_000_000 + i)}`);
  const firstIndex = requests.length;
  const run = await campaignCase.start(stack, recipients);
  const sends = () => requests.slice(firstIndex).filter((r) => r.path.endsWith('/sms/send'));
  while (sends().length === 0) await sleep(100);
  const windowStart = sends()[0]!.at + WARMUP_SECONDS * 1000;
  const windowEnd = windowStart + WINDOW_SECONDS * 1000;
  log(`${campaignCase.name}: ${size} recipients; measuring ${WINDOW_SECONDS} s after ${WARMUP_SECONDS} s of warm-up`);
  while (performance.now() < windowEnd) await sleep(1000);
  const progress = await run.progress();
  await run.cancel();
  await run.result();

  const mine = requests.slice(firstIndex);
  const inWindow = mine.filter((r) => r.at >= windowStart && r.at < windowEnd);
  const perMinute = (60 * inWindow.length) / WINDOW_SECONDS;
  const gaps = inWindow.slice(1).map((r, i) => r.at - inWindow[i]!.at);
  const byPath = Object.entries(
    mine.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.path]: (acc[r.path] ?? 0) + 1 }), {}),
  )
    .map(([path, n]) => `${path} ×${n}`)
    .join(', ');
  return {
    row: {
      case: `${campaignCase.name} (${campaignCase.recipientsPerRequest} recipient(s) per request)`,
      'requests/min in window': round(perMinute),
      'vs limit': `${round((100 * perMinute) / LIMIT_PER_MINUTE)}%`,
      '429s (target 0)': mine.filter((r) => r.status === 429).length,
      // The provider's own count: the least any of its one-minute windows had left (0: a window was filled).
      'least X-RateLimit-Remaining': Math.min(...mine.map((r) => r.remaining ?? LIMIT_PER_MINUTE)),
      'longest gap, s': round(Math.max(0, ...gaps) / 1000, 2),
      'sent before cancel': progress.sent,
      'campaign runs': progress.runs,
    },
    byPath,
  };
}

export const rateLimitBenchmark: Benchmark = {
  name: 'rate-limit',
  async run({ temporal, log }) {
    const taskQueue = `bench-rate-limit-${randomUUID()}`;
    const stack = await startStack({
      temporal,
      taskQueue,
      // The sandbox at its default timings, this account at the spec's 120/min; workers started below.
      sandbox: { port: 0, db: ':memory:', log: () => {} },
      ratePerMinute: LIMIT_PER_MINUTE,
      initialBalance: 1_000_000_000,
      startWorker: false,
    });
    const requests: RequestRecord[] = [];
    let workers: BenchWorkers | undefined;
    try {
      workers = await startBenchWorkers({ temporal }, stack, {
        count: WORKERS,
        taskQueue,
        fetch: countingFetch(requests),
        options: () => ({
          providerRatePerMinute: LIMIT_PER_MINUTE,
          // The audience files this bench writes.
          audienceAccess: { folders: [tmpdir()], urlHosts: [] },
          maxCachedWorkflows: 1_000,
        }),
      });

      const measured: Measured[] = [];
      for (const campaignCase of [uniform, personalised].filter((c) => CASES.includes(c.name)))
        measured.push(await measure(stack, requests, campaignCase, log));

      return {
        title: `Campaigns under the real limit: ${LIMIT_PER_MINUTE} requests/min, ${WORKERS} workers, ${WINDOW_SECONDS} s window after ${WARMUP_SECONDS} s warm-up`,
        rows: measured.map((m) => m.row),
        notes: [
          ...measured.map((m) => `requests by path (${m.row.case}): ${m.byPath}`),
          `uniform: one text in chunks of ${UNIFORM_CHUNK} (the queue paces requests, whatever their size); personalised: "Hi {name}, …" over a CSV of distinct names`,
          `each of the ${WORKERS} workers (in this process, own connections) declares the provider queue's rate; the Temporal server enforces it across them`,
          "requests counted at the workers' HTTP client when they start, whatever their answer; the campaign is cancelled after the window",
          `sandbox at its default timings; the account's limit is the spec's ${LIMIT_PER_MINUTE}/min per token; Temporal dev server on this machine`,
        ],
      };
    } finally {
      await workers?.close();
      await stack.close();
      for (const cleanup of cleanups.splice(0)) cleanup();
    }
  },
};
