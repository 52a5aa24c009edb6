/**
 * A worker killed while its send request is in flight, then replaced: the activity retries with the same
 * idempotency key, the provider replays its first answer, and every recipient is charged exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { waitFor } from '../support/wait-for.js';

const PENDING_ACTIVITY_STATE_STARTED = 2;

describe('a worker crash mid-send', () => {
  let stack: RunningStack;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    // The provider holds each send for 3 s: long enough to kill the worker while the request is in flight.
    stack = await startTestStack({ startWorker: false, sandbox: { sendLatencyMs: 3000 } });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await stack?.close();
  });

  it('charges every recipient once and still reports each final state', { timeout: 180_000 }, async () => {
    const recipients = [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered, '2348012345678'];
    const before = (await stack.messaging.balance.get()).balance;

    workers.push(startWorkerProcess(stack));
    const started = await stack.msgflow.sendSms({ recipients, sender: 'ACME', message: 'crash test' });
    const handle = stack.temporal.workflow.getHandle(started.workflowId);

    // Wait until the send activity is running in the first worker, then kill that worker.
    await waitFor(
      async () => {
        const { raw } = await handle.describe();
        return (raw.pendingActivities ?? []).some(
          (a) => a.activityType?.name === 'sendSms' && a.state === PENDING_ACTIVITY_STATE_STARTED,
        );
      },
      'the send running in the first worker',
      { intervalMs: 50 },
    );
    await workers[0]!.kill();
    workers.push(startWorkerProcess(stack));

    const result = await started.result();
    expect(result.messages.map((m) => m.status).sort()).toEqual(['delivered', 'delivered', 'undelivered']);

    const ledger = await stack.admin.ledger(stack.accountId!);
    const charges = ledger.filter((entry) => entry.kind === 'sms');
    expect(charges.map((c) => c.recipient).sort()).toEqual(recipients.map((r) => `+${r}`).sort());
    expect(new Set(charges.map((c) => c.reference)).size).toBe(recipients.length);
    const after = (await stack.messaging.balance.get()).balance;
    expect(before - after).toBe(result.cost);

    // The retry happened, and it was answered from the provider's idempotency record.
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'sendSms');
    const sendStarted = events.find(
      (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
    );
    expect(sendStarted?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThan(1);
  });
});
