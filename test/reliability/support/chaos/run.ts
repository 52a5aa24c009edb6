/**
 * One fault run: the production topology (with proxies in front of msgflow's dependencies), a schedule of
 * faults from the seed applied by the nemesis while the workload runs, a quiet period, and the checker's
 * verdict. Used by `npm run chaos` (scripts/chaos.ts) and test/reliability/chaos.reliability.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebhookChaos } from '../../../../src/sandbox/index.js';
import { generateOtpKeys } from '../../../../src/crypto/otp-keys.js';
import { Msgflow } from '../../../../src/starter/index.js';
import { startClusterRig } from '../../../support/cluster/rig.js';
import { type CheckReport, checkRun, RULES } from './checker.js';
import { type FaultRecord, runNemesis } from './nemesis.js';
import { describeFault, type Fault, faultsByKind, generateSchedule } from './schedule.js';
import { SIGNAL_LIMIT, startRefusedWorkflow } from './refused-workflow.js';
import { runWorkload, type WorkloadLog } from './workload.js';
import { teamWeightsEnv } from './workload-promises.js';

export interface ChaosRunOptions {
  seed: number;
  /** Faults and workload, the quiet period included. */
  minutes: number;
  /** The fault-free end of the run, before judging. Default 30 s. */
  quietMs?: number;
  campaignRecipients?: number;
  log?: (line: string) => void;
}

export interface ChaosRunReport {
  seed: number;
  schedule: Fault[];
  faults: FaultRecord[];
  workload: WorkloadLog;
  check: CheckReport;
  /** The summary's figures, one line. */
  summary: Record<string, number | string>;
}

/** The account's own limit (the workers' queue stays well under it but for the 429 faults). */
const PROVIDER_PER_MINUTE = 6_000;
/** Two requests a second across the workers: the campaign's chunks go out over the run, meeting its faults. */
const WORKER_QUEUE_PER_MINUTE = 120;
/** The provider's webhook retries span about two minutes: beyond any one fault. */
const RETRY_SCHEDULE_MS = [500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 60_000];

export async function runChaos(options: ChaosRunOptions): Promise<ChaosRunReport> {
  const log = options.log ?? (() => {});
  const runMs = Math.round(options.minutes * 60_000);
  const quietMs = options.quietMs ?? 30_000;
  const schedule = generateSchedule(options.seed, { runMs, quietMs });
  log(
    `seed ${options.seed}: ${schedule.length} faults over ${options.minutes} min (the last ${quietMs / 1000} s quiet)`,
  );
  for (const fault of schedule) log(`  ${describeFault(fault)}`);

  const webhookChaos: WebhookChaos = { duplicateProbability: 0, maxExtraDelayMs: 0, contradictProbability: 0 };
  const otp = generateOtpKeys();
  // The fraud guard records every OTP send but blocks none: the workload's numbers share prefixes on purpose.
  const dir = await mkdtemp(join(tmpdir(), 'msgflow-chaos-'));
  const guardRules = join(dir, 'otp-guard.json');
  await writeFile(guardRules, JSON.stringify({ prefixVelocity: null, conversion: null }));
  const sandboxLog: string[] = [];
  const rig = await startClusterRig({
    log: (line) => log(`[cluster] ${line}`),
    proxies: true,
    dynamicConfig: { 'history.maximumSignalsPerExecution': SIGNAL_LIMIT },
    sandbox: {
      log: (line) => sandboxLog.push(line),
      // A send takes 300 ms to process, as a real provider's may: a fault often strikes one in flight.
      sendLatencyMs: 300,
      // Outcomes 2 s after each send: events are on their way whenever a fault strikes.
      carrier: { submitMs: 200, finalMs: 2_000 },
      webhooks: { retryScheduleMs: RETRY_SCHEDULE_MS, timeoutMs: 10_000, chaos: webhookChaos },
      otpPerIpPerMinute: 10_000,
    },
    account: { balance: 100_000_000, ratePerMinute: PROVIDER_PER_MINUTE },
    replicas: {
      ratePerMinute: WORKER_QUEUE_PER_MINUTE,
      // The workload's two teams share the token 3:1.
      env: { ...otp.env, MSGFLOW_OTP_GUARD_RULES: guardRules, MSGFLOW_TEAM_WEIGHTS: teamWeightsEnv() },
    },
  });
  try {
    const store = rig.store;
    const msgflow = new Msgflow(rig.client, rig.taskQueue, { otpKeys: otp.keys, store });
    const refusedWorkflow = await startRefusedWorkflow(rig.client, rig.messaging, store);
    const startedAt = Date.now();
    const [faults, workload] = await Promise.all([
      runNemesis(
        {
          rig,
          webhookChaos,
          ratePerMinute: PROVIDER_PER_MINUTE,
          log: (line) => log(`+${((Date.now() - startedAt) / 1000).toFixed(1)}s ${line}`),
        },
        schedule,
        startedAt,
        log,
      ),
      runWorkload({
        msgflow,
        admin: rig.provider.admin,
        seed: options.seed,
        startedAt,
        untilMs: runMs - quietMs,
        sendsUntilMs: runMs - quietMs / 2,
        campaignRecipients: options.campaignRecipients ?? 300,
        log,
      }),
    ]);
    const lastHealAt = startedAt + Math.max(0, ...faults.map((f) => f.healedMs));
    log(`faults healed; workload done at +${((Date.now() - startedAt) / 1000).toFixed(1)}s; checking`);
    const check = await checkRun(
      {
        client: rig.client,
        admin: rig.provider.admin,
        accountId: rig.account.accountId,
        messaging: rig.messaging,
        store,
        startedAt,
        refusedWorkflow,
      },
      workload,
      faults,
      lastHealAt,
    );
    const kinds = faultsByKind(faults.map((f) => f.fault));
    const summary = {
      seed: options.seed,
      minutes: options.minutes,
      faults: faults.length,
      kinds: Object.values(kinds).filter((n) => n > 0).length,
      faultErrors: faults.filter((f) => f.error).length,
      sends: workload.sends.length,
      sendsAccepted: workload.sends.filter((s) => s.accepted).length,
      otps: workload.otps.length,
      campaignRecipients: check.counts.campaignRecipients ?? 0,
      ...check.counts,
      retriedCalls: workload.retriedCalls,
      webhookRetries: sandboxLog.filter((line) => line.includes('retrying')).length,
      toldAfterS: check.toldAfterMs === null ? 'never' : Math.round(check.toldAfterMs / 1000),
      teamShares: check.teamShares,
      violations: check.violations.length,
    };
    return { seed: options.seed, schedule, faults, workload, check, summary };
  } finally {
    await rig.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The report as lines: faults by kind, the summary, and each violation with its rule and faults around. */
export function describeReport(report: ChaosRunReport): string[] {
  const kinds = faultsByKind(report.faults.map((f) => f.fault));
  return [
    `faults by kind: ${Object.entries(kinds)
      .map(([k, n]) => `${k}=${n}`)
      .join(' ')}`,
    ...report.faults.filter((f) => f.error).map((f) => `fault ${f.fault.kind} ${f.fault.target}: ${f.error}`),
    ...Object.entries(report.check.taskFailures).map(([cause, n]) => `workflow tasks failed (retried) ${n}× ${cause}`),
    ...report.workload.campaigns.map(
      (c) => `campaign ${c.key} (${c.audience.length}, ${c.fate}): ${c.steps.join(', ')}`,
    ),
    ...(report.workload.erasure
      ? [`erasure of +${report.workload.erasure.number}: ${report.workload.erasure.steps.join(', ')}`]
      : []),
    ...report.check.violations.map(
      (v) =>
        `VIOLATION ${v.rule} (${RULES[v.rule]}): ${v.subject}: ${v.detail}; faults around: ${v.faultsAround.join('; ') || 'none'}`,
    ),
  ];
}
