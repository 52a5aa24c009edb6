/**
 * A worker killed while an OTP send is in flight, then replaced: the send (a local activity of the session's
 * workflow task) runs again in the next worker with the same idempotency key, the provider replays its first
 * answer, and the person gets one code, charged once — which then verifies. The caller of `sendOtp` simply
 * waits through the crash.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { generateOtpKeys } from '../../src/crypto/otp-keys.js';
import { otpWorkflowId } from '../../src/starter/otp.js';
import { activityCalls } from '../support/history.js';
import { startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { waitFor } from '../support/wait-for.js';

const PENDING_WORKFLOW_TASK_STATE_STARTED = 2;
/** Inside the provider's 3 s hold of the send the first worker made on taking the session's first task. */
const SEND_IN_FLIGHT_MS = 1_500;

describe('a worker crash mid OTP send', () => {
  const otp = generateOtpKeys();
  let stack: RunningStack;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    // The provider holds each send for 3 s: long enough to kill the worker while the request is in flight.
    stack = await startTestStack({
      startWorker: false,
      otpKeys: otp.keys,
      sandbox: { sendLatencyMs: 3000, otpPerIpPerMinute: 10_000 },
    });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await stack?.close();
  });

  it('sends one code, charges once, and the code verifies', { timeout: 180_000 }, async () => {
    const recipient = '2348012345696';
    workers.push(startWorkerProcess(stack, otp.env));
    const sending = stack.msgflow.sendOtp({ purpose: 'login', recipient });
    const handle = stack.temporal.workflow.getHandle(otpWorkflowId(otp.keys.hashKey, 'login', recipient));

    await waitFor(
      async () => (await handle.describe()).raw.pendingWorkflowTask?.state === PENDING_WORKFLOW_TASK_STATE_STARTED,
      "the first worker running the session's first task",
      { intervalMs: 50 },
    );
    await sleep(SEND_IN_FLIGHT_MS);
    await workers[0]!.kill();
    workers.push(startWorkerProcess(stack, otp.env));

    expect(await sending).toMatchObject({ status: 'sent', sends: 1 });
    const inbox = (await stack.admin.inbox(recipient)).filter((m) => m.kind === 'otp');
    expect(inbox).toHaveLength(1);
    const charges = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'otp');
    expect(charges).toHaveLength(1);

    const code = inbox[0]!.text.match(/\d{6}/)![0];
    expect((await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })).status).toBe('verified');

    // The first worker's task (and the send in it) was lost, and the one send recorded is the next worker's.
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.some((e) => e.workflowTaskTimedOutEventAttributes)).toBe(true);
    expect(activityCalls(events, 'sendOtpCode')).toHaveLength(1);
  });
});
