/**
 * The one moment of the outbox between two writes of different systems: Temporal accepted a signal and the
 * relay dies (`kill -9`) before the store marks its outcomes told. Another ingress takes the workflows over
 * once the lease runs out and tells them again: each workflow hears its outcome once or twice, keeps the first,
 * and none is lost. On SQLite and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { freePort } from '../../src/temporal/dev-server.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';
import { startIngressProcess, startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { printSummary } from './support/summary.js';

const MESSAGES = Number(process.env.MSGFLOW_RELIABILITY_RELAY_MESSAGES ?? 30);
/** Only a signal can settle these waits: the window never ends during the run. */
const LONG_WAIT_MS = 60 * 60 * 1000;
const LEASE_SECONDS = 3;

describe.each(['sqlite', 'postgres'] as const)('a relay killed after Temporal accepted a signal, on %s', (dialect) => {
  let postgres: TestPostgres | undefined;
  let stack: RunningStack;
  /** What a child process needs to open the stack's store (PostgreSQL: its URL; a file: the stack sets it). */
  let storeEnv: Record<string, string> = {};
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    if (dialect === 'postgres') {
      postgres = await startPostgres();
      const url = await postgres.createDatabase('msgflow_relay_kill');
      storeEnv = { MSGFLOW_DATABASE_URL: url };
      stack = await startTestStack({ startWorker: false, ingress: { relay: false }, store: { url } });
    } else {
      stack = await startTestStack({ startWorker: false, ingress: { relay: false } });
    }
    processes.push(startWorkerProcess(stack, storeEnv));
  }, 180_000);
  afterAll(async () => {
    for (const p of processes) await p.kill();
    await stack?.close();
    await postgres?.destroy();
  });

  async function ingress(env: Record<string, string> = {}) {
    const started = startIngressProcess(stack, await freePort(), {
      ...storeEnv,
      MSGFLOW_RELAY_LEASE_SECONDS: String(LEASE_SECONDS),
      ...env,
    });
    processes.push(started);
    return started;
  }

  it(
    'tells every outcome again after the lease, once at most, and each workflow keeps the first',
    { timeout: 600_000 },
    async () => {
      const run = randomUUID().slice(0, 8);
      const ids = Array.from({ length: MESSAGES }, (_, i) => `kill-${dialect}-${run}-${i}`);
      const started = await Promise.all(
        ids.map((id) => stack.msgflow.awaitMessage(id, { waitWindowMs: LONG_WAIT_MS })),
      );
      await waitFor(
        async () => (await Promise.all(ids.map((id) => stack.store.message(id)))).every((m) => m?.waiters.length === 1),
        'every waiter registered',
        { timeoutMs: 120_000, intervalMs: 100 },
      );
      // Recorded as the ingress records them; the dying relay finds them on its first sweep.
      await stack.store.recordEvents(
        ids.map((providerMessageId) => ({
          providerMessageId,
          status: 'delivered',
          timestamp: new Date().toISOString(),
        })),
      );
      const dying = await ingress({ MSGFLOW_TEST_KILL_AFTER_SIGNAL: '1' });
      await new Promise<void>((resolve) => dying.child.once('exit', () => resolve()));
      expect(dying.child.signalCode).toBe('SIGKILL');
      // Killed by the hook that runs once Temporal accepted a signal, before marking: every outcome is still untold.
      expect((await stack.store.outbox.backlog()).untold).toBe(MESSAGES);

      await ingress();
      const results = await Promise.all(started.map((w) => w.result()));
      const lost = results.filter((r) => r.status !== 'delivered' || r.source !== 'webhook').length;
      await waitFor(async () => (await stack.store.outbox.backlog()).untold === 0, 'an empty backlog', {
        timeoutMs: 30_000,
      });
      const signalsPerWorkflow = await Promise.all(
        started.map(async (w) => {
          let signals = 0;
          for (const event of (await stack.temporal.workflow.getHandle(w.workflowId).fetchHistory()).events ?? [])
            if (event.workflowExecutionSignaledEventAttributes) signals++;
          return signals;
        }),
      );
      const toldTwice = signalsPerWorkflow.filter((n) => n === 2).length;
      printSummary(`relay killed after a signal (${dialect})`, { messages: MESSAGES, lost, toldTwice });
      expect(lost).toBe(0);
      // Told again at most once: a workflow still open when the second relay told it hears its outcome twice (one
      // that had completed on the first is not signalled again).
      expect(Math.max(...signalsPerWorkflow)).toBeLessThanOrEqual(2);
      expect(Math.min(...signalsPerWorkflow)).toBe(1);
    },
  );
});
