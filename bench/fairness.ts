/**
 * Teams sharing one token at the sandbox's real limit (120 requests/minute), with 3 msgflow workers on the same
 * task queues and one store. Logins run alone first (the quiet OTP latency). Then clinic's campaign sends alone
 * (its rate: a lone team's share of the limit), marketing's starts beside it (weights 1:1), and the weights file
 * every worker reads live is rewritten to clinic:3 while both send. Each team's requests are counted from the
 * sandbox's ledger (its campaign's charged sends, one recipient each, under its own sender) over a window of
 * each phase after a short settling; logins (send, then verify) arrive every few seconds meanwhile. Every
 * request the workers make is also counted at their HTTP client, for the 429s.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStack, type RunningStack } from '../src/stack.js';
import { teamWeightsOf } from '../src/temporal/team-weights.js';
import { type BenchWorkers, startBenchWorkers } from './workers.js';
import { type Benchmark, type BenchRow, percentile, round } from './harness.js';
import { numbersStartingWith, spreadNumbers } from './numbers.js';

const LIMIT_PER_MINUTE = 120;
const WORKERS = 3;
/** Settling after each change (a campaign's start, new weights), then the measured window. */
const SETTLE_SECONDS = Number(process.env.MSGFLOW_BENCH_FAIRNESS_SETTLE_S ?? 10);
const LONE_WINDOW_SECONDS = Number(process.env.MSGFLOW_BENCH_FAIRNESS_LONE_S ?? 40);
const SHARED_WINDOW_SECONDS = Number(process.env.MSGFLOW_BENCH_FAIRNESS_WINDOW_S ?? 60);
const QUIET_LOGINS = Number(process.env.MSGFLOW_BENCH_FAIRNESS_QUIET_LOGINS ?? 8);
const LOGIN_INTERVAL_MS = 5_000;
/** The OTP target at the limit (docs/benchmarks.md, otp-at-limit): one request interval over the quiet p99. */
const OTP_ALLOWANCE_MS = 60_000 / LIMIT_PER_MINUTE;
/** A share within this much of its weight's share, relative. */
const SHARE_TOLERANCE = 0.1;
const LONE_TARGET = 0.95;

const TEAMS = [
  { team: 'clinic', sender: 'CLINIC', prefix: '2348051' },
  { team: 'marketing', sender: 'PROMO', prefix: '2348052' },
] as const;
type Team = (typeof TEAMS)[number]['team'];

interface Window {
  from: number;
  to: number;
}

/** The platform fetch, recording each answer's status. */
function countingFetch(statuses: number[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
}

export async function login(stack: RunningStack, recipient: string): Promise<number> {
  const t0 = performance.now();
  await stack.msgflow.sendOtp({ purpose: 'bench', recipient });
  const send = performance.now() - t0;
  const code = (await stack.admin.inbox(recipient))[0]!.text.match(/\d{6}/)![0];
  const answer = await stack.msgflow.verifyOtp({ purpose: 'bench', recipient, code });
  if (answer.status !== 'verified') throw new Error(`verify answered ${answer.status}`);
  return send;
}

/** Logins every LOGIN_INTERVAL_MS until `until` (ms since the epoch), open loop; their send latencies. */
export async function loginsUntil(stack: RunningStack, people: string[], until: number): Promise<number[]> {
  const logins: Promise<number>[] = [];
  while (Date.now() < until && people.length > 0) {
    logins.push(login(stack, people.shift()!));
    await sleep(LOGIN_INTERVAL_MS);
  }
  return Promise.all(logins);
}

const within = (share: number, target: number) => Math.abs(share - target) <= SHARE_TOLERANCE * target;
const verdict = (ok: boolean) => (ok ? 'pass' : 'FAIL');

export const fairnessBenchmark: Benchmark = {
  name: 'fairness',
  async run({ temporal, log }) {
    const taskQueue = `bench-fairness-${randomUUID()}`;
    const stack = await startStack({
      temporal,
      taskQueue,
      // The sandbox's default timings and limits (120/min for the token, its per-address OTP limit).
      sandbox: { port: 0, db: ':memory:', log: () => {} },
      ratePerMinute: LIMIT_PER_MINUTE,
      initialBalance: 1_000_000_000,
      startWorker: false,
    });
    const dir = mkdtempSync(join(tmpdir(), 'bench-fairness-'));
    const weightsFile = join(dir, 'team-weights');
    writeFileSync(weightsFile, 'clinic:1\nmarketing:1\n');
    const statuses: number[] = [];
    let workers: BenchWorkers | undefined;
    const campaigns: Array<Awaited<ReturnType<RunningStack['msgflow']['startCampaign']>>> = [];
    try {
      workers = await startBenchWorkers({ temporal }, stack, {
        count: WORKERS,
        taskQueue,
        fetch: countingFetch(statuses),
        options: () => ({
          providerRatePerMinute: LIMIT_PER_MINUTE,
          // Each worker reads the file on its own, as separate deployments would.
          teamWeight: teamWeightsOf({ MSGFLOW_TEAM_WEIGHTS_FILE: weightsFile }),
          otpKeyRing: stack.otpKeys.sealing,
        }),
      });

      for (const { sender } of TEAMS) await stack.admin.addSender(stack.accountId!, sender);
      const people = spreadNumbers(200);
      await login(stack, people.shift()!); // untimed: a deployed worker is warm
      await sleep(LOGIN_INTERVAL_MS);
      log(`quiet: ${QUIET_LOGINS} logins, one every ${LOGIN_INTERVAL_MS / 1000} s`);
      const quiet = await loginsUntil(stack, people.splice(0, QUIET_LOGINS), Number.POSITIVE_INFINITY);

      const start = async ({ team, sender, prefix }: (typeof TEAMS)[number], seconds: number) => {
        const run = await stack.msgflow.startCampaign(
          {
            sender,
            message: `Your ${team} reminder`,
            audience: { type: 'inline', recipients: numbersStartingWith(Math.ceil(seconds * 2.2) + 60, prefix) },
            chunkSize: 1,
            chunksInFlight: 16,
            preflight: false,
            waitWindowMs: 60_000,
            team,
          },
          { key: `fairness-${team}-${randomUUID()}` },
        );
        campaigns.push(run);
        return run;
      };
      const phaseSeconds = SETTLE_SECONDS + SHARED_WINDOW_SECONDS;
      const clinic = await start(TEAMS[0], LONE_WINDOW_SECONDS + SETTLE_SECONDS + 2 * phaseSeconds);
      const lone = { from: Date.now() + SETTLE_SECONDS * 1000, to: 0 };
      lone.to = lone.from + LONE_WINDOW_SECONDS * 1000;
      log(`clinic alone: ${LONE_WINDOW_SECONDS} s after ${SETTLE_SECONDS} s`);
      await sleep(lone.to - Date.now());

      const marketing = await start(TEAMS[1], 2 * phaseSeconds);
      const even = { from: Date.now() + SETTLE_SECONDS * 1000, to: Date.now() + phaseSeconds * 1000 };
      log(`clinic:1 and marketing:1: ${SHARED_WINDOW_SECONDS} s after ${SETTLE_SECONDS} s, with logins`);
      const evenLogins = loginsUntil(stack, people, even.to);
      await sleep(even.to - Date.now());
      writeFileSync(weightsFile, 'clinic:3\nmarketing:1\n');
      const weighted = { from: Date.now() + SETTLE_SECONDS * 1000, to: Date.now() + phaseSeconds * 1000 };
      log(`clinic:3 and marketing:1 (the file rewritten): ${SHARED_WINDOW_SECONDS} s after ${SETTLE_SECONDS} s`);
      const weightedLogins = loginsUntil(stack, people, weighted.to);
      await sleep(weighted.to - Date.now());
      const loaded = [...(await evenLogins), ...(await weightedLogins)];
      for (const run of [clinic, marketing]) await run.cancel();
      await Promise.allSettled([clinic.result(), marketing.result()]);

      const ledger = await stack.admin.ledger(stack.accountId!);
      const count = (run: { workflowId: string }, { from, to }: Window) =>
        ledger.filter((e) => {
          const at = Date.parse(e.created_at);
          return e.kind === 'sms' && e.idempotency_key?.startsWith(`${run.workflowId}/`) && at >= from && at < to;
        }).length;
      const perMinute = (n: number, w: Window) => round((n * 60_000) / (w.to - w.from));
      const shared = (name: string, w: Window, clinicWeight: number) => {
        const counts: Record<Team, number> = { clinic: count(clinic, w), marketing: count(marketing, w) };
        const total = counts.clinic + counts.marketing;
        const targets: Record<Team, number> = {
          clinic: clinicWeight / (clinicWeight + 1),
          marketing: 1 / (clinicWeight + 1),
        };
        const shares = { clinic: counts.clinic / total, marketing: counts.marketing / total };
        const ok = within(shares.clinic, targets.clinic) && within(shares.marketing, targets.marketing);
        return {
          case: name,
          'clinic req/min': perMinute(counts.clinic, w),
          'marketing req/min': perMinute(counts.marketing, w),
          'campaigns, % of limit': round((100 * perMinute(total, w)) / LIMIT_PER_MINUTE),
          'clinic share %': round(100 * shares.clinic),
          'marketing share %': round(100 * shares.marketing),
          target: `${round(100 * targets.clinic)} / ${round(100 * targets.marketing)} ±10% rel.`,
          result: verdict(ok),
        } satisfies BenchRow;
      };
      const loneCount = count(clinic, lone);
      const loneShare = perMinute(loneCount, lone) / LIMIT_PER_MINUTE;
      const quietP99 = percentile(quiet, 99);
      const loadedP99 = percentile(loaded, 99);
      const tooMany = statuses.filter((s) => s === 429).length;
      const rows: BenchRow[] = [
        {
          case: 'clinic alone',
          'clinic req/min': perMinute(loneCount, lone),
          'marketing req/min': 0,
          'campaigns, % of limit': round(100 * loneShare),
          'clinic share %': 100,
          'marketing share %': 0,
          target: `≥ ${100 * LONE_TARGET}% of the limit`,
          result: verdict(loneShare >= LONE_TARGET),
        },
        shared('clinic:1, marketing:1', even, 1),
        shared('clinic:3, marketing:1 (changed live)', weighted, 3),
      ];
      const otp = `OTP send p99: quiet ${round(quietP99)} ms (${quiet.length} logins), beside the two campaigns ${round(loadedP99)} ms (${loaded.length} logins); target ≤ quiet + ${OTP_ALLOWANCE_MS} ms = ${round(quietP99 + OTP_ALLOWANCE_MS)} ms: ${verdict(loadedP99 <= quietP99 + OTP_ALLOWANCE_MS)}`;
      return {
        title: `Two teams on one token at the real limit (${LIMIT_PER_MINUTE} requests/min), ${WORKERS} workers, weights 1:1 then 3:1`,
        rows,
        notes: [
          otp,
          `429 answers to the workers' requests (target 0): ${tooMany} of ${statuses.length}: ${verdict(tooMany === 0)}`,
          `in the shared phases the logins take ${(2 * 60_000) / LOGIN_INTERVAL_MS} requests/min of the limit (one every ${LOGIN_INTERVAL_MS / 1000} s, a send and a verify each); the campaigns share the rest`,
          `windows: clinic alone ${LONE_WINDOW_SECONDS} s, each shared phase ${SHARED_WINDOW_SECONDS} s, each after ${SETTLE_SECONDS} s of settling; requests counted from the sandbox's ledger (each campaign's charged sends, one recipient a request)`,
          'campaigns: one text, chunkSize 1, 16 chunks in flight, senders CLINIC and PROMO; weights from a file every worker reads live (rewritten between the shared phases)',
          `logins: sendOtp, code read from the inbox (untimed), verifyOtp, one every ${LOGIN_INTERVAL_MS / 1000} s; quiet ones before the campaigns`,
          `sandbox at its default timings and limits in this process; ${WORKERS} workers in this process, own connections, one SQLite store; Temporal dev server on this machine`,
        ],
      };
    } finally {
      for (const run of campaigns) await run.cancel().catch(() => undefined);
      await workers?.close();
      await stack.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
