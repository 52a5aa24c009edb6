/**
 * A campaign whose worker is killed twice mid-send (SIGKILL, while a chunk's request is in flight) and
 * replaced each time: the interrupted chunks are retried with their idempotency keys, the new workers
 * rebuild the de-duplication memory from the file, and the campaign still ends exact: every recipient
 * charged once, every state counted as the sandbox recorded it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_STATUSES } from '../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { waitFor } from '../support/wait-for.js';

const PENDING_ACTIVITY_STATE_STARTED = 2;
const RECIPIENTS = 300;
const CHUNK = 15;
const CRASH_WAIT = { timeoutMs: 180_000, intervalMs: 50 };

describe('a campaign through worker crashes', () => {
  let stack: RunningStack;
  const workers: WorkerProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'campaign-crash-'));
  beforeAll(async () => {
    // The provider holds each send for 400 ms, so a kill can land while a chunk's request is in flight.
    stack = await startTestStack({ startWorker: false, sandbox: { sendLatencyMs: 400 } });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends exact after its worker is killed twice mid-send', { timeout: 600_000 }, async () => {
    const magic = FINAL_STATUSES.map((s) => MAGIC_NUMBERS[s]);
    const plain = Array.from({ length: RECIPIENTS - magic.length }, (_, i) => `23480${20_000_000 + i}`);
    const valid = [...magic, ...plain];
    // NDJSON, with the first page's numbers repeated at the end: a worker that lost its memory must still skip them.
    const lines = [...valid, ...valid.slice(0, CHUNK)].map((phone, i) => JSON.stringify({ id: i, phone }));
    const path = join(dir, 'audience.ndjson');
    writeFileSync(path, `${lines.join('\n')}\n`);

    workers.push(startWorkerProcess(stack));
    const run = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'crash-proof reminder',
      audience: { type: 'file', path },
      chunkSize: CHUNK,
    });
    const charged = async () => (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms').length;

    for (const [n, after] of [
      [1, 2 * CHUNK],
      [2, 10 * CHUNK],
    ] as const) {
      // Kill the current worker while a chunk's send is running in it, once the campaign is that far along.
      await waitFor(async () => (await charged()) >= after, `${after} charges`, CRASH_WAIT);
      await waitFor(
        async () => {
          const { raw } = await stack.temporal.workflow.getHandle(run.workflowId).describe();
          return (raw.pendingActivities ?? []).some(
            (a) => a.activityType?.name === 'sendCampaignChunk' && a.state === PENDING_ACTIVITY_STATE_STARTED,
          );
        },
        `a chunk send in flight (kill ${n})`,
        CRASH_WAIT,
      );
      await workers.at(-1)!.kill();
      workers.push(startWorkerProcess(stack));
    }

    const result = await run.result();
    expect(result).toMatchObject({ sent: RECIPIENTS, duplicates: CHUNK, chunks: RECIPIENTS / CHUNK });
    expect(result.counts).toEqual({ delivered: RECIPIENTS - 4, undelivered: 1, failed: 1, rejected: 1, expired: 1 });

    const charges = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms');
    expect(charges).toHaveLength(RECIPIENTS);
    expect(new Set(charges.map((c) => c.recipient)).size).toBe(RECIPIENTS);
    const sandbox: Record<string, number> = {};
    for await (const m of stack.messaging.messages.list({ perPage: 200 }))
      sandbox[m.status] = (sandbox[m.status] ?? 0) + 1;
    expect(sandbox).toEqual(result.counts);

    // The kills interrupted sends: some chunk request was attempted more than once, answered by its idempotency key.
    const retried = (await allEvents(stack, run.workflowId)).filter(
      (e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1,
    );
    expect(retried.length).toBeGreaterThan(0);
  });
});

/** Every event of every run of a workflow id (it may have continued as new). */
async function allEvents(stack: RunningStack, workflowId: string): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  for await (const execution of stack.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    events.push(
      ...((await stack.temporal.workflow.getHandle(workflowId, execution.runId).fetchHistory()).events ?? []),
    );
  }
  return events;
}
