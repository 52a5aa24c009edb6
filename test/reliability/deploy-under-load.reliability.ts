/**
 * A deploy under load, as an operator runs it. Build A is the released code (the release's commit); build B is
 * this checkout's code plus two changes the test makes: one that is not replay-safe in `sendSms` (pinned) and
 * one under a patch in the campaign (auto-upgrade). With A current: a campaign whose send window spans the
 * deploy, OTP sessions (some awaiting verification when B becomes current), single sends awaiting their
 * status and a schedule. B is ramped to 50 %, made current, A is stopped once `msgflow deployment status`
 * says it is safe, then A is made current again (a rollback). Every promise is judged at the end: no
 * non-determinism in any history, every recipient charged once, no 429, every answered OTP verified, every
 * pinned run ended on its build. Then the same pinned change without versioning: it fails its run.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOtpKeys } from '../../src/crypto/otp-keys.js';
import { WORKFLOW_VERSIONING } from '../../src/definitions/versioning.js';
import type { RunningStack } from '../../src/stack.js';
import type { DeploymentStatus } from '../../src/temporal/deployment-status.js';
import { freePort } from '../../src/temporal/dev-server.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { buildsOfTasks } from '../support/history.js';
import { latestOtpCode } from '../support/otp-inbox.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { buildIdOf, checkoutOfCommit, checkoutWithEdits, releaseCommit, type SourceEdit } from './support/builds.js';
import { printSummary } from './support/summary.js';
import { type HistoryJson, workflowTypeOf } from '../replay/history-file.js';

/** The release build A runs: MSGFLOW_DEPLOY_FROM names another commit (e.g. HEAD while no release exists). */
const RELEASE = '0.2.0';
const RECIPIENTS = 2000;
const OTP_SESSIONS = 50;
const SINGLE_SENDS = 20;
/** The provider's real limit, and the token budget both builds' workers share: a budget per build would meet 429s. */
const PROVIDER_PER_MINUTE = 120;
const WORKERS_PER_MINUTE = 120;
const NON_DETERMINISTIC =
  temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR;

/** Build B's changes: a pinned type changed without a patch, the campaign changed under one. */
const B_EDITS: SourceEdit[] = [
  {
    file: 'workflows/send-sms.ts',
    find: "  checkFirstInput('sendSms', input);\n",
    replace: "  checkFirstInput('sendSms', input);\n  await sleep(1); // build B: a new timer, not replay-safe\n",
  },
  { file: 'workflows/send-sms.ts', find: 'import { condition,', replace: 'import { sleep, condition,' },
  {
    file: 'workflows/campaign.ts',
    find: "      case 'send':\n",
    replace: "      case 'send':\n        if (patched('deploy-test-build-b')) await sleep(1);\n",
  },
  {
    file: 'workflows/campaign.ts',
    find: "import type { CampaignInput, CampaignResult } from '../src/api/campaign-io.js';\n",
    replace:
      "import { patched, sleep } from '@temporalio/workflow';\nimport type { CampaignInput, CampaignResult } from '../src/api/campaign-io.js';\n",
  },
];

const numbers = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(6, '0')}`);
/** HH:MM in UTC, `minutes` from now. */
const utcClock = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString().slice(11, 16);

interface Build {
  name: 'A' | 'B';
  root: string;
  buildId: string;
}

describe('a deploy under load', () => {
  let stack: RunningStack;
  let dir: string;
  const otp = generateOtpKeys();
  const workers: WorkerProcess[] = [];
  const builds: Record<'A' | 'B', Build> = {} as never;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'msgflow-deploy-'));
    const commit = process.env.MSGFLOW_DEPLOY_FROM ?? (await releaseCommit(RELEASE));
    await checkoutOfCommit(commit, join(dir, 'a'));
    await checkoutWithEdits(join(dir, 'b'), B_EDITS);
    for (const name of ['A', 'B'] as const) {
      const root = join(dir, name.toLowerCase());
      builds[name] = { name, root, buildId: await buildIdOf(root) };
    }
    stack = await startTestStack({
      startWorker: false,
      otpKeys: otp.keys,
      ratePerMinute: PROVIDER_PER_MINUTE,
      sandbox: { otpPerIpPerMinute: 10_000 },
    });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A versioned worker of `build` in the stack's deployment; its metrics on a port of its own. */
  async function startBuild(build: Build, env: Record<string, string> = {}) {
    const metricsPort = await freePort();
    const worker = startWorkerProcess(
      stack,
      {
        ...otp.env,
        MSGFLOW_RATE_LIMIT_PER_MINUTE: String(WORKERS_PER_MINUTE),
        MSGFLOW_WORKER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
        MSGFLOW_DEPLOYMENT_MAKE_CURRENT: 'if-none',
        // Many logins from one prefix in a minute: the fraud guard's business, not this test's.
        MSGFLOW_OTP_GUARD_RULES: 'off',
        MSGFLOW_LOG_LEVEL: 'info',
        ...env,
      },
      { root: build.root },
    );
    workers.push(worker);
    await waitFor(() => worker.output().includes('worker running'), `build ${build.name}'s worker running`);
    return { worker, rateLimited: () => counterOf(metricsPort, 'msgflow_provider_rate_limited') };
  }

  async function status(): Promise<DeploymentStatus> {
    const result = await runMsgflow(['deployment', 'status', '--deployment', stack.taskQueue, '--json'], {
      cwd: dir,
      env: cliEnvFor(stack),
    });
    if (result.code !== 0 && result.code !== 3) throw new Error(`deployment status failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as DeploymentStatus;
  }
  const buildIn = (s: DeploymentStatus, build: Build) => s.builds.find((b) => b.buildId === build.buildId);

  const deployment = () => ({
    namespace: stack.temporal.options.namespace,
    deploymentName: stack.taskQueue,
    identity: 'deploy-under-load test',
  });
  const ramp = (build: Build, percentage: number) =>
    stack.temporal.workflowService.setWorkerDeploymentRampingVersion({
      ...deployment(),
      buildId: build.buildId,
      percentage,
    });
  const makeCurrent = (build: Build) =>
    stack.temporal.workflowService.setWorkerDeploymentCurrentVersion({ ...deployment(), buildId: build.buildId });

  /** The build of every completed workflow task of a run, in order. */
  const taskBuilds = async (handle: WorkflowHandle) => buildsOfTasks((await handle.fetchHistory()).events ?? []);
  const handleOf = (workflowId: string) => stack.temporal.workflow.getHandle(workflowId);

  it("replays the release's pinned histories against the release's own build", async () => {
    // npm test replays the auto-upgrade types' histories against the current code; pinned runs finish on their
    // own build, so theirs are replayed here, against build A.
    const folder = `test/replay/histories/${RELEASE}`;
    const pinned = readdirSync(folder)
      .filter((file) => file.endsWith('.json'))
      .map((file) => join(folder, file))
      .filter((file) => {
        const type = workflowTypeOf(JSON.parse(readFileSync(file, 'utf8')) as HistoryJson);
        return WORKFLOW_VERSIONING[type as keyof typeof WORKFLOW_VERSIONING].behavior === 'PINNED';
      });
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const replay = promisify(execFile)(
      process.execPath,
      ['--import', tsx, 'test/reliability/support/replay-in-build.ts', builds.A.root, ...pinned],
      { maxBuffer: 16 << 20 },
    );
    const { stdout } = await replay.catch((error: { stdout?: string }) => {
      throw new Error(`a pinned history of ${RELEASE} does not replay on its build: ${error.stdout ?? String(error)}`);
    });
    printSummary('release histories on their build', { release: RELEASE, pinned: pinned.length });
    expect(pinned.length).toBeGreaterThanOrEqual(6);
    expect(stdout).toContain(`replayed ${pinned.length}, failed 0`);
  });

  it('keeps every promise through a ramp, a promotion and a rollback', { timeout: 480_000 }, async () => {
    const { A, B } = builds;
    const started = Date.now();
    const a = await startBuild(A);
    await waitFor(async () => (await status()).currentBuildId === A.buildId, 'build A current');

    // --- Load with A current ---------------------------------------------------------------------------------
    const audience = numbers('2348031', RECIPIENTS);
    const campaign = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'across a deploy',
      audience: { type: 'inline', recipients: audience },
      chunkSize: 20,
      sendWindow: { start: utcClock(-60), end: utcClock(60), timeZone: 'UTC' },
    });
    const scheduleId = `deploy-${Date.now()}`;
    await stack.msgflow.campaignSchedules.create({
      id: scheduleId,
      timing: { cron: ['0 0 1 1 *'] },
      campaign: { sender: 'ACME', message: 'scheduled', audience: { type: 'inline', recipients: ['2348039000001'] } },
    });
    // Final statuses wait until after the promotion: the single sends started now await theirs across it.
    await stack.admin.setWebhooksPaused(stack.accountId!, true);
    const singles = await Promise.all(
      numbers('2348071', SINGLE_SENDS).map((to) =>
        stack.msgflow.sendSms({ recipients: [to], sender: 'ACME', message: 'single send' }),
      ),
    );
    const otpRecipients = numbers('2348091', OTP_SESSIONS + 20);
    const sessions = new Map<string, string>();
    const startOtp = async (recipient: string) =>
      sessions.set(recipient, (await stack.msgflow.sendOtp({ purpose: 'login', recipient })).workflowId);
    const verified = new Set<string>();
    const verify = async (recipient: string) => {
      const answer = await stack.msgflow.verifyOtp({
        purpose: 'login',
        recipient,
        code: await latestOtpCode(stack.admin, recipient),
      });
      if (answer.status === 'verified') verified.add(recipient);
    };
    for (const recipient of otpRecipients.slice(0, OTP_SESSIONS)) await startOtp(recipient);
    for (const recipient of otpRecipients.slice(0, OTP_SESSIONS / 2)) await verify(recipient);
    await waitFor(async () => (await campaign.progress()).sent >= RECIPIENTS / 5, 'a fifth of the campaign on A', {
      timeoutMs: 180_000,
    });

    // --- B joins, is ramped to 50 %, then made current ---------------------------------------------------------
    const b = await startBuild(B);
    await waitFor(async () => buildIn(await status(), B) !== undefined, 'build B registered');
    const rampedAt = Date.now();
    await ramp(B, 50);
    for (const recipient of otpRecipients.slice(OTP_SESSIONS, OTP_SESSIONS + 10)) await startOtp(recipient);
    const rampSingles = await Promise.all(
      numbers('2348072', 10).map((to) => stack.msgflow.sendSms({ recipients: [to], sender: 'ACME', message: 'ramp' })),
    );
    await makeCurrent(B);
    for (const recipient of otpRecipients.slice(OTP_SESSIONS + 10)) await startOtp(recipient);
    await stack.msgflow.campaignSchedules.trigger(scheduleId);
    const sentBeforePromotion = (await campaign.progress()).sent;
    await stack.admin.setWebhooksPaused(stack.accountId!, false);
    for (const recipient of otpRecipients.slice(OTP_SESSIONS / 2)) await verify(recipient);

    const campaignResult = await campaign.result();
    const singleResults = await Promise.all([...singles, ...rampSingles].map((s) => s.result()));
    const scheduled = await waitFor(
      async () => (await stack.msgflow.campaignSchedules.describe(scheduleId)).recentRuns[0],
      'the scheduled run',
    );
    await handleOf(scheduled.workflowId).result();
    await stack.msgflow.campaignSchedules.delete(scheduleId);
    for (const workflowId of sessions.values()) await handleOf(workflowId).result();
    const rampEndedAt = Date.now();

    // --- A stops only once the status command says so; then the rollback -----------------------------------
    const safe = await waitFor(
      async () => {
        const s = await status();
        return buildIn(s, A)?.safeToStop ? s : undefined;
      },
      'build A safe to stop',
      { timeoutMs: 120_000 },
    );
    expect(buildIn(safe, A)).toMatchObject({ pinned: 0, running: {} });
    const rateLimited = (await a.rateLimited()) + (await b.rateLimited());
    await a.worker.kill();

    await startBuild(A);
    await makeCurrent(A);
    const rolledBackAt = Date.now();
    const afterRollback = await stack.msgflow.sendSms({
      recipients: ['2348073000001'],
      sender: 'ACME',
      message: 'back',
    });
    const firstTask = await waitFor(async () => (await taskBuilds(handleOf(afterRollback.workflowId)))[0], 'its task');
    const rollbackSeconds = (Date.now() - rolledBackAt) / 1000;
    await afterRollback.result();

    // --- The verdict ------------------------------------------------------------------------------------------
    const runs = await runsOnQueue(stack);
    const perBuild: Record<string, number> = {};
    let nonDeterminism = 0;
    let pinnedFinishedOnA = 0;
    for (const run of runs) {
      const { events } = await stack.temporal.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      nonDeterminism += (events ?? []).filter(
        (e) => e.workflowTaskFailedEventAttributes?.cause === NON_DETERMINISTIC,
      ).length;
      const tasks = buildsOfTasks(events ?? []);
      const first = tasks[0] === A.buildId ? 'A' : tasks[0] === B.buildId ? 'B' : '?';
      perBuild[`${run.type}@${first}`] = (perBuild[`${run.type}@${first}`] ?? 0) + 1;
      if (run.type !== 'smsCampaign' && first === 'A' && tasks.every((t) => t === A.buildId)) pinnedFinishedOnA++;
    }
    const charges = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms');
    const chargesPerNumber = new Map<string, number>();
    for (const { recipient } of charges)
      if (recipient) chargesPerNumber.set(recipient, (chargesPerNumber.get(recipient) ?? 0) + 1);
    const sentTo = [...audience, ...singleResults.flatMap((r) => r.messages.map((m) => m.mobile_number.slice(1)))];
    const chargedWrongly = sentTo.filter((n) => chargesPerNumber.get(`+${n}`) !== 1).length;

    printSummary('deploy under load', {
      builds: `A=${A.buildId},B=${B.buildId}`,
      runs: Object.entries(perBuild)
        .map(([k, v]) => `${k}:${v}`)
        .join(','),
      pinnedFinishedOnA,
      nonDeterminism,
      chargedTwiceOrNot: chargedWrongly,
      rateLimited,
      campaignSentBeforePromotion: sentBeforePromotion,
      otpVerified: `${verified.size}/${OTP_SESSIONS + 20}`,
      rollbackToFirstRunOnA_s: rollbackSeconds.toFixed(1),
      rampToAllEnded_s: ((rampEndedAt - rampedAt) / 1000).toFixed(0),
      seconds: ((Date.now() - started) / 1000).toFixed(0),
    });

    expect(nonDeterminism).toBe(0);
    expect(chargedWrongly).toBe(0);
    expect(rateLimited).toBe(0);
    expect(verified.size).toBe(OTP_SESSIONS + 20);
    expect(campaignResult).toMatchObject({ sent: RECIPIENTS });
    expect(sentBeforePromotion).toBeLessThan(RECIPIENTS);
    expect(firstTask).toBe(A.buildId);
    // Runs of each kind started on each build; every pinned run started on A ended there.
    for (const key of ['smsCampaign@A', 'otpVerification@A', 'otpVerification@B', 'sendSms@A', 'sendSms@B'])
      expect(perBuild[key], key).toBeGreaterThan(0);
    const pinnedOnA = Object.entries(perBuild)
      .filter(([k]) => k.endsWith('@A') && !k.startsWith('smsCampaign'))
      .reduce((n, [, v]) => n + v, 0);
    expect(pinnedFinishedOnA).toBe(pinnedOnA);
    // The campaign moved to B at a task after the promotion, and the scheduled run started on B.
    expect((await taskBuilds(handleOf(campaign.workflowId))).at(-1)).toBe(B.buildId);
    expect((await taskBuilds(handleOf(scheduled.workflowId)))[0]).toBe(B.buildId);
  });

  it("without versioning, B's pinned change fails a run A started: the change the deploy kept apart", async () => {
    const { A, B } = builds;
    const unversioned = { MSGFLOW_WORKER_VERSIONING: 'false', MSGFLOW_TASK_QUEUE: `${stack.taskQueue}-unversioned` };
    const a = await startBuild(A, unversioned);
    await stack.admin.setWebhooksPaused(stack.accountId!, true);
    const handle = await stack.temporal.workflow.start('sendSms', {
      taskQueue: unversioned.MSGFLOW_TASK_QUEUE,
      workflowId: `sms:deploy-unversioned-${Date.now()}`,
      args: [{ recipients: ['2348074000001'], sender: 'ACME', message: 'unversioned' }],
    });
    // A sent it and waits for its status; B takes over when the status arrives.
    await waitFor(
      async () => (await stack.admin.ledger(stack.accountId!)).some((e) => e.recipient === '+2348074000001'),
      'the send',
    );
    await a.worker.kill();
    await startBuild(B, unversioned);
    await stack.admin.setWebhooksPaused(stack.accountId!, false);
    const failure = await waitFor(async () => {
      const { events } = await handle.fetchHistory();
      return (events ?? []).find((e) => e.workflowTaskFailedEventAttributes?.cause === NON_DETERMINISTIC);
    }, 'the non-determinism failure');
    printSummary('deploy without versioning', {
      nonDeterminism: 1,
      failure: JSON.stringify(failure.workflowTaskFailedEventAttributes?.failure?.message?.slice(0, 120) ?? ''),
    });
    await handle.terminate('the test saw its non-determinism');
  });
});

/** Every run (continued runs too) on the stack's task queue. */
async function runsOnQueue(stack: RunningStack): Promise<Array<{ workflowId: string; runId: string; type: string }>> {
  const runs = [];
  for await (const run of stack.temporal.workflow.list({ query: `TaskQueue = '${stack.taskQueue}'` }))
    runs.push({ workflowId: run.workflowId, runId: run.runId, type: run.type });
  return runs;
}

/** A counter's total over its series, from a worker's Prometheus endpoint. */
async function counterOf(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const series = text.split('\n').filter((line) => line.startsWith(name));
  if (series.length === 0) throw new Error(`the worker on port ${port} exports no ${name}`);
  return series.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
