/**
 * Versioned workers on the test run's real dev server: two builds of the worker join one worker deployment;
 * with the second current, an OTP session (pinned) started on the first finishes there, a paused campaign
 * (auto-upgrade) moves to the second, new runs — and a schedule's, made under the first — start on the second, and `msgflow deployment status` counts
 * the runs per build and type and refuses "safe to stop" for the first build until its pinned run has ended.
 * And a `msgflow worker` with versioning off still runs msgflow's workflows, unversioned.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { decodeVersioningBehavior } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessagingClient } from '../../src/client/index.js';
import type { RunningStack } from '../../src/stack.js';
import type { DeploymentStatus } from '../../src/temporal/deployment-status.js';
import { providerTaskQueue } from '../../src/definitions/task-queues.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { startTestStack, startTestWorker, type TestWorker } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { buildsOfTasks } from '../support/history.js';
import { latestOtpCode } from '../support/otp-inbox.js';
import { waitFor } from '../support/wait-for.js';

const BUILD_A = 'build-a';
const BUILD_B = 'build-b';

describe('versioned workers', () => {
  let stack: RunningStack;
  let cwd: string;
  const workers: TestWorker[] = [];

  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'msgflow-versioning-'));
    stack = await startTestStack({ startWorker: false, sandbox: { otpPerIpPerMinute: 10_000 } });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await stack?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  /** Every provider request of the builds' workers, with the build that made it. */
  const providerCalls: Array<[string, string]> = [];

  /** A worker of `buildId` in the stack's own deployment, made current as it starts. */
  async function startBuild(buildId: string): Promise<void> {
    const fetchOf: typeof fetch = (input, init) => {
      providerCalls.push([buildId, String(input)]);
      return fetch(input, init);
    };
    workers.push(
      await startTestWorker(stack, {
        store: stack.store,
        messaging: new MessagingClient({
          baseUrl: stack.sandbox.baseUrl,
          token: stack.token,
          maxRetries: 0,
          fetch: fetchOf,
        }),
        otpKeyRing: stack.otpKeys.sealing,
        versioning: { deploymentName: stack.taskQueue, buildId, makeCurrent: 'always' },
      }),
    );
  }

  async function status(...args: string[]) {
    const result = await runMsgflow(['deployment', 'status', '--deployment', stack.taskQueue, '--json', ...args], {
      cwd,
      env: cliEnvFor(stack),
    });
    if (result.code !== 0 && result.code !== 3) throw new Error(`deployment status failed: ${result.stderr}`);
    return { code: result.code, status: JSON.parse(result.stdout) as DeploymentStatus };
  }

  const buildOf = (s: DeploymentStatus, buildId: string) => s.builds.find((b) => b.buildId === buildId);

  async function versionOf(handle: WorkflowHandle) {
    const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
    return { buildId: info?.deploymentVersion?.buildId, behavior: decodeVersioningBehavior(info?.behavior) };
  }

  /** The build of every completed workflow task in a run's history. */
  const taskBuildsOf = async (handle: WorkflowHandle) => buildsOfTasks((await handle.fetchHistory()).events ?? []);
  const latestCode = (recipient: string) => latestOtpCode(stack.admin, recipient);

  it(
    'keeps a pinned run on its build, moves an auto-upgrade one, and holds the old build until the pinned run ends',
    {
      timeout: 180_000,
    },
    async () => {
      await startBuild(BUILD_A);
      const onA = '2348012345801';
      const session = await stack.msgflow.sendOtp({ purpose: 'login', recipient: onA });
      const otpOnA = stack.temporal.workflow.getHandle(session.workflowId);
      const recipients = Array.from({ length: 30 }, (_, i) => `2348012346${String(100 + i)}`);
      const campaign = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'across a deploy',
        audience: { type: 'inline', recipients },
        chunkSize: 1,
      });
      // A schedule made while build A is current.
      const scheduleId = `versioning-${Date.now()}`;
      await stack.msgflow.campaignSchedules.create({
        id: scheduleId,
        timing: { cron: ['0 0 1 1 *'] },
        campaign: { sender: 'ACME', message: 'scheduled', audience: { type: 'inline', recipients: ['2348012345803'] } },
      });
      await waitFor(async () => (await campaign.progress()).sent >= 2, 'a few chunks on build A');
      await campaign.pause('deploying');
      const campaignHandle = stack.temporal.workflow.getHandle(campaign.workflowId);
      expect(await versionOf(otpOnA)).toEqual({ buildId: BUILD_A, behavior: 'PINNED' });
      expect(await versionOf(campaignHandle)).toEqual({
        buildId: BUILD_A,
        behavior: 'AUTO_UPGRADE',
      });

      await startBuild(BUILD_B);
      // Visibility is updated shortly after each workflow task.
      const before = await waitFor(async () => {
        const { status: s } = await status();
        const a = buildOf(s, BUILD_A);
        return a?.running.otpVerification === 1 && a.running.smsCampaign === 1 ? s : undefined;
      }, 'both runs counted on build A');
      expect(before.currentBuildId).toBe(BUILD_B);
      expect(buildOf(before, BUILD_A)).toMatchObject({
        routing: 'none',
        pinned: 1,
        pinnedByType: { otpVerification: 1 },
        safeToStop: false,
      });
      expect(buildOf(before, BUILD_B)).toMatchObject({ routing: 'current', safeToStop: false });
      // `--build` exits 3 while the build may not stop: what a script stopping it checks.
      expect((await status('--build', BUILD_A)).code).toBe(3);

      // New runs start on the current build.
      const onB = '2348012345802';
      const newSession = await stack.msgflow.sendOtp({ purpose: 'login', recipient: onB });
      expect(await versionOf(stack.temporal.workflow.getHandle(newSession.workflowId))).toMatchObject({
        buildId: BUILD_B,
      });

      // A schedule starts each run on the build current when it fires.
      await stack.msgflow.campaignSchedules.trigger(scheduleId);
      const scheduled = await waitFor(
        async () => (await stack.msgflow.campaignSchedules.describe(scheduleId)).recentRuns[0],
        'the triggered run',
      );
      const scheduledRun = stack.temporal.workflow.getHandle(scheduled.workflowId);
      await scheduledRun.result();
      expect(new Set(await taskBuildsOf(scheduledRun))).toEqual(new Set([BUILD_B]));
      await stack.msgflow.campaignSchedules.delete(scheduleId);

      // The campaign moves to build B at its next task and finishes there.
      await campaign.resume();
      expect(await campaign.result()).toMatchObject({ sent: recipients.length });
      const campaignBuilds = await taskBuildsOf(campaignHandle);
      expect(campaignBuilds).toContain(BUILD_A);
      expect(campaignBuilds.at(-1)).toBe(BUILD_B);

      // Still pinned, the session is answered by build A after B became current, and ends there.
      expect(
        await stack.msgflow.verifyOtp({ purpose: 'login', recipient: onA, code: await latestCode(onA) }),
      ).toMatchObject({ status: 'verified' });
      await otpOnA.result();
      expect(new Set(await taskBuildsOf(otpOnA))).toEqual(new Set([BUILD_A]));

      const after = await waitFor(async () => {
        const { status: s } = await status();
        return buildOf(s, BUILD_A)?.safeToStop ? s : undefined;
      }, 'build A safe to stop');
      expect(buildOf(after, BUILD_A)).toMatchObject({ running: {}, pinned: 0 });
      expect((await status('--build', BUILD_A)).code).toBe(0);
      await stack.msgflow.verifyOtp({ purpose: 'login', recipient: onB, code: await latestCode(onB) });
    },
  );

  it("runs a pinned run's provider calls on its own build: the provider queue is in the deployment", async () => {
    // Build B is current (the test above): a send pinned to A at its start, and one left to the deployment.
    const [endpoint] = await stack.messaging.webhooks.list().toArray();
    // No final event reaches the sends: each asks the provider at the end of its window, a second provider call.
    await stack.messaging.webhooks.update(endpoint!.id, { url: 'http://127.0.0.1:9/nowhere' });
    try {
      const send = async (versioningOverride?: { pinnedTo: { deploymentName: string; buildId: string } }) => {
        const before = providerCalls.length;
        const handle = await stack.temporal.workflow.start('sendSms', {
          taskQueue: stack.taskQueue,
          workflowId: `sms:versioning-${Date.now()}-${before}`,
          args: [{ recipients: ['2348012345805'], sender: 'ACME', message: 'pinned', waitWindowMs: 1000 }],
          ...(versioningOverride ? { versioningOverride } : {}),
        });
        await handle.result();
        return providerCalls.slice(before).map(([build]) => build);
      };
      const onA = await send({ pinnedTo: { deploymentName: stack.taskQueue, buildId: BUILD_A } });
      expect(onA.length).toBeGreaterThanOrEqual(2);
      expect(new Set(onA)).toEqual(new Set([BUILD_A]));
      expect(new Set(await send())).toEqual(new Set([BUILD_B]));
    } finally {
      await stack.messaging.webhooks.update(endpoint!.id, { url: stack.ingress.webhookUrl });
    }
    const { workerDeploymentVersionInfo } = await stack.temporal.workflowService.describeWorkerDeploymentVersion({
      namespace: stack.temporal.options.namespace,
      deploymentVersion: { deploymentName: stack.taskQueue, buildId: BUILD_A },
    });
    const queues = (workerDeploymentVersionInfo?.taskQueueInfos ?? []).map((queue) => queue.name);
    expect(queues).toEqual(expect.arrayContaining([stack.taskQueue, providerTaskQueue(stack.taskQueue)]));
  });
});

describe('unversioned workers (MSGFLOW_WORKER_VERSIONING=false)', () => {
  let stack: RunningStack;
  let worker: WorkerProcess | undefined;
  let cwd: string;

  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'msgflow-unversioned-'));
    stack = await startTestStack({ startWorker: false });
  });
  afterAll(async () => {
    await worker?.kill();
    await stack?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it(
    'keep working as before: `msgflow worker` polls unversioned and joins no deployment',
    { timeout: 180_000 },
    async () => {
      worker = startWorkerProcess(stack, { MSGFLOW_WORKER_VERSIONING: 'false', MSGFLOW_LOG_LEVEL: 'info' });
      const sent = await stack.msgflow.sendSms({
        recipients: ['2348012345804'],
        sender: 'ACME',
        message: 'unversioned',
      });
      expect((await sent.result()).messages.map((m) => m.status)).toEqual(['delivered']);
      const info = (await stack.temporal.workflow.getHandle(sent.workflowId).describe()).raw.workflowExecutionInfo;
      expect(info?.versioningInfo?.deploymentVersion ?? null).toBeNull();
      expect(worker.output()).toContain('"versioning":"off"');
      const status = await runMsgflow(['deployment', 'status', '--deployment', stack.taskQueue], {
        cwd,
        env: cliEnvFor(stack),
      });
      expect(status.code).toBe(1);
      expect(status.stderr).toContain(`no worker deployment ${stack.taskQueue}`);
    },
  );
});
