/**
 * Logins beside a campaign. `otp-at-limit`: the sandbox's real limits (120 requests/minute per token, its
 * per-address OTP limit), a campaign keeping the token saturated while a login (send, then verify) arrives
 * every few seconds; OTP latency beside the same logins on a quiet stack, and the share of the limit the
 * campaign achieved. `otp-beside-campaign`: limits lifted, logins at a few per second beside a
 * 10,000-recipient campaign at full speed, beside the same logins alone. The worker runs in its own process.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningStack } from '../src/stack.js';
import { activityCalls } from '../test/support/history.js';
import { BENCH_SANDBOX } from './campaign-target.js';
import { type Benchmark, type BenchRow, percentile, round } from './harness.js';
import { numbersStartingWith, spreadNumbers } from './numbers.js';
import { startOtpBenchStack } from './otp-worker.js';

const REAL_LIMIT_PER_MINUTE = 120;
const LOGINS_AT_LIMIT = Number(process.env.MSGFLOW_BENCH_OTP_LOGINS ?? 12);
const LOGIN_INTERVAL_AT_LIMIT_MS = 5_000;
const LOGINS_BESIDE_CAMPAIGN = Number(process.env.MSGFLOW_BENCH_OTP_BESIDE_LOGINS ?? 60);
const LOGINS_PER_SECOND_BESIDE_CAMPAIGN = 3;
const BIG_CAMPAIGN = Number(process.env.MSGFLOW_BENCH_OTP_CAMPAIGN_RECIPIENTS ?? 10_000);

interface Login {
  workflowId: string;
  send: number;
  verify: number;
}

export const otpAtLimitBenchmark: Benchmark = {
  name: 'otp-at-limit',
  async run(context) {
    const bench = await startOtpBenchStack(context, {
      taskQueue: `bench-otp-limit-${randomUUID()}`,
      // The sandbox's default timings and limits: 120/min for the token, its per-address OTP limit.
      sandbox: { port: 0, db: ':memory:', log: () => {} },
      ratePerMinute: REAL_LIMIT_PER_MINUTE,
      initialBalance: 1_000_000_000,
    });
    const { stack } = bench;
    // People logging in are spread over prefixes (as the OTP fraud guard expects); the campaign's are not.
    const people = spreadNumbers(2 * LOGINS_AT_LIMIT + 1);
    const numbers = numbersStartingWith(1_000, '2348033');
    try {
      await login(stack, people.shift()!); // untimed: a deployed worker is warm
      // The warm-up's two requests took the budget's burst: the quiet logins start once it has refilled.
      await sleep(LOGIN_INTERVAL_AT_LIMIT_MS);
      context.log(`quiet: ${LOGINS_AT_LIMIT} logins, one every ${LOGIN_INTERVAL_AT_LIMIT_MS / 1000} s`);
      const quiet = await loginsEvery(stack, people.splice(0, LOGINS_AT_LIMIT), LOGIN_INTERVAL_AT_LIMIT_MS);

      // Single-recipient requests (personalised texts are one request each; they are built on another branch).
      const audience = numbers.splice(0, Math.ceil((LOGINS_AT_LIMIT * LOGIN_INTERVAL_AT_LIMIT_MS * 2.5) / 1000) + 60);
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'Your appointment is tomorrow at 10:00',
        audience: { type: 'inline', recipients: audience },
        chunkSize: 1,
        chunksInFlight: 16,
        preflight: false,
        waitWindowMs: 60_000,
      });
      // Saturated once the provider queue has a backlog: every request slot has a chunk waiting for it.
      await sleep(5_000);
      context.log(`beside the campaign: ${LOGINS_AT_LIMIT} logins, one every ${LOGIN_INTERVAL_AT_LIMIT_MS / 1000} s`);
      const windowStart = Date.now();
      const loaded = await loginsEvery(stack, people.splice(0, LOGINS_AT_LIMIT), LOGIN_INTERVAL_AT_LIMIT_MS);
      const windowEnd = Date.now();
      await run.cancel();
      await run.result();

      const ledger = await stack.admin.ledger(stack.accountId!);
      const inWindow = (kind: string) =>
        ledger.filter((e) => {
          const at = Date.parse(e.created_at);
          return e.kind === kind && at >= windowStart && at < windowEnd;
        }).length;
      const minutes = (windowEnd - windowStart) / 60_000;
      const budget = REAL_LIMIT_PER_MINUTE * minutes;
      const campaignRequests = inWindow('sms');
      // Each login is two requests (send and verify); only sends are charged, so verifies are counted here.
      const otpRequests = inWindow('otp') * 2;
      const interval = 60_000 / REAL_LIMIT_PER_MINUTE;
      const retried = await retriedCalls(stack, [...quiet, ...loaded].map((l) => l.workflowId).concat(run.workflowId));
      return {
        title: `OTP logins at the real limits (${REAL_LIMIT_PER_MINUTE}/min), quiet vs beside a saturating campaign, ms`,
        rows: [row('quiet', quiet), row('beside the campaign', loaded)],
        notes: [
          `target: send p99 beside the campaign ≤ quiet send p99 + one request interval (${interval} ms) = ${round(
            percentile(
              quiet.map((l) => l.send),
              99,
            ) + interval,
          )} ms`,
          `campaign's share of the limit while logins ran: ${round((100 * campaignRequests) / budget)}% (${campaignRequests} requests in ${round(minutes * 60)} s); with the logins' requests: ${round((100 * (campaignRequests + otpRequests)) / budget)}%`,
          `provider calls retried (each 429 is one): ${retried} (the logins' sessions and the campaign's last run)`,
          'campaign: single-recipient requests (chunkSize 1, 16 in flight), one text for all; logins: sendOtp, code read from the inbox (untimed), verifyOtp',
          'sandbox at its default timings and limits in this process; `msgflow worker` in its own process; Temporal dev server on this machine',
        ],
      };
    } finally {
      await bench.close();
    }
  },
};

export const otpBesideCampaignBenchmark: Benchmark = {
  name: 'otp-beside-campaign',
  async run(context) {
    const bench = await startOtpBenchStack(context, {
      taskQueue: `bench-otp-beside-${randomUUID()}`,
      sandbox: { ...BENCH_SANDBOX, otpPerIpPerMinute: 1_000_000, log: () => {} },
      ratePerMinute: 1_000_000,
      initialBalance: 1_000_000_000,
    });
    const { stack } = bench;
    const interval = 1000 / LOGINS_PER_SECOND_BESIDE_CAMPAIGN;
    try {
      const people = spreadNumbers(2 * LOGINS_BESIDE_CAMPAIGN + 1);
      const numbers = numbersStartingWith(BIG_CAMPAIGN, '2348034');
      await login(stack, people.shift()!); // untimed: a deployed worker is warm
      context.log(`quiet: ${LOGINS_BESIDE_CAMPAIGN} logins at ${LOGINS_PER_SECOND_BESIDE_CAMPAIGN}/s`);
      const quiet = await loginsEvery(stack, people.splice(0, LOGINS_BESIDE_CAMPAIGN), interval);
      const audience = numbers.splice(0, BIG_CAMPAIGN);
      const started = performance.now();
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'Your appointment is tomorrow at 10:00',
        audience: { type: 'inline', recipients: audience },
        preflight: false,
      });
      context.log(`beside a ${BIG_CAMPAIGN}-recipient campaign: ${LOGINS_BESIDE_CAMPAIGN} logins`);
      const loaded = await loginsEvery(stack, people.splice(0, LOGINS_BESIDE_CAMPAIGN), interval);
      const loginsDone = performance.now() - started;
      const result = await run.result();
      const campaignMs = performance.now() - started;
      return {
        title: `OTP logins at ${LOGINS_PER_SECOND_BESIDE_CAMPAIGN}/s, limits lifted, quiet vs beside a ${BIG_CAMPAIGN}-recipient campaign, ms`,
        rows: [row('quiet', quiet), row('beside the campaign', loaded)],
        notes: [
          `campaign: ${result.sent} sent in ${round(campaignMs / 1000)} s (chunks of 1,000); the logins ran during its first ${round(loginsDone / 1000)} s`,
          'sandbox in this process, no carrier delay, limits lifted; `msgflow worker` in its own process; Temporal dev server on this machine',
        ],
      };
    } finally {
      await bench.close();
    }
  },
};

/** One login every `intervalMs` (open loop: a slow one does not delay the next), each send then verify. */
async function loginsEvery(stack: RunningStack, recipients: string[], intervalMs: number): Promise<Login[]> {
  const logins: Promise<Login>[] = [];
  for (const [i, recipient] of recipients.entries()) {
    if (i > 0) await sleep(intervalMs);
    logins.push(login(stack, recipient));
  }
  return Promise.all(logins);
}

async function login(stack: RunningStack, recipient: string): Promise<Login> {
  let t0 = performance.now();
  const { workflowId } = await stack.msgflow.sendOtp({ purpose: 'bench', recipient });
  const send = performance.now() - t0;
  const code = (await stack.admin.inbox(recipient))[0]!.text.match(/\d{6}/)![0];
  t0 = performance.now();
  const answer = await stack.msgflow.verifyOtp({ purpose: 'bench', recipient, code });
  const verify = performance.now() - t0;
  if (answer.status !== 'verified') throw new Error(`verify answered ${answer.status}`);
  return { workflowId, send, verify };
}

/** Provider calls (queued or local) that needed a retry (a 429 or another transient failure) in these workflows' histories. */
async function retriedCalls(stack: RunningStack, workflowIds: string[]): Promise<number> {
  let retried = 0;
  for (const workflowId of workflowIds) {
    const events = (await stack.temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    retried += activityCalls(events).filter((call) => call.attempt > 1).length;
  }
  return retried;
}

function row(name: string, logins: Login[]): BenchRow {
  const send = logins.map((l) => l.send);
  const verify = logins.map((l) => l.verify);
  return {
    case: name,
    logins: logins.length,
    'send p50': round(percentile(send, 50)),
    'send p99': round(percentile(send, 99)),
    'verify p50': round(percentile(verify, 50)),
    'verify p99': round(percentile(verify, 99)),
  };
}
