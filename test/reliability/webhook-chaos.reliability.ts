/**
 * Webhook chaos: 10,000 messages (MSGFLOW_CHAOS_MESSAGES) reach their final states in the real sandbox,
 * whose status events flow to the real ingress twice over — once as single bodies, once in batches from a
 * second, batch-enabled endpoint — with the sandbox duplicating and holding back (so reordering)
 * deliveries and the ingress refusing some and half-applying some batches (so the provider retries).
 * Temporal must end up with exactly one message workflow per message, holding the provider's final
 * status: zero lost, zero double-counted. A sample of waiters also checks each subscriber is told once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_STATUSES, isFinalStatus, MAX_RECIPIENTS_PER_REQUEST } from '../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import type { MessageOutcome } from '../../src/definitions/message-status.js';
import { startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { type ChaosIngress, startChaosIngress } from './support/chaos-ingress.js';
import {
  countWithFinalStatus,
  listMessageWorkflowRuns,
  reconcile,
  terminateQueue,
} from './support/message-workflows.js';
import { waitFor } from '../support/wait-for.js';
import { chosenSeed, printSummary, seededRandom } from './support/summary.js';

const MESSAGES = Number(process.env.MSGFLOW_CHAOS_MESSAGES ?? 10_000);
/** One message in this many gets an awaitMessage subscriber, whose history is then checked. */
const WAITER_EVERY = 100;
const SEED = chosenSeed();
/**
 * Deadlines only stop a broken run from hanging (nothing asserts on time). One worker applies message
 * workflows one activation thread at a time: about 10 new ones a second when other suites load the same
 * 2-core machine, several times more on a quiet one. A run that stops progressing fails sooner (STALL_MS).
 */
const APPLY_DEADLINE_MS = Math.max(600_000, MESSAGES * 250);
/** Give up earlier when the count of applied workflows stops moving altogether. */
const STALL_MS = 120_000;

describe('webhook chaos', () => {
  let stack: RunningStack;
  let chaos: ChaosIngress;
  let worker: WorkerProcess;
  const sendOrder = new Map<string, number>();
  const secrets: string[] = [];
  const sandboxLog: string[] = [];
  const random = seededRandom(SEED);

  beforeAll(async () => {
    // The worker runs in its own process, so it does not share an event loop with the sandbox and the
    // ingress (this process): three processes, two cores.
    stack = await startTestStack({
      startWorker: false,
      sandbox: {
        log: (line) => sandboxLog.push(line),
        webhooks: {
          // Enough deliveries in flight that hold-backs reorder rather than throttle; retries outlast the
          // ingress's 5 s Retry-After several times over.
          concurrency: 48,
          batchMax: 100,
          retryScheduleMs: [100, 200, 400, 800, 1600, 3200, 6400, 12_800],
          timeoutMs: 30_000,
          chaos: { duplicateProbability: 0.1, maxExtraDelayMs: 250, random },
        },
      },
    });
    chaos = await startChaosIngress({
      temporal: stack.temporal,
      taskQueue: stack.taskQueue,
      secrets: () => secrets,
      faults: { refuseProbability: 0.02, partialBatchProbability: 0.2, random },
      orderOf: (id) => sendOrder.get(id),
    });
    // Message workflows stay open for their orphan window, so all of them are in flight at once. The SDK's
    // default cache (sized for ~1.7 MB per workflow) overruns the heap at ~1,500 of msgflow's (~2.5 MB
    // each) and the worker stalls; a smaller cache evicts and replays instead.
    worker = startWorkerProcess(stack, { MSGFLOW_MAX_CACHED_WORKFLOWS: '1000' });
    // The stack's endpoint (single bodies) now delivers to the chaos ingress, and a batch endpoint beside it.
    const [single] = await stack.messaging.webhooks.list().toArray();
    secrets.push(stack.webhookSecret);
    await stack.messaging.webhooks.update(single!.id, { url: chaos.ingress.webhookUrl });
    const batch = await stack.messaging.webhooks.create({ url: chaos.ingress.webhookUrl, batch: true });
    secrets.push(batch.secret);
  });

  afterAll(async () => {
    if (stack)
      await terminateQueue(stack.temporal, stack.taskQueue, 'webhook chaos suite finished').catch(() => undefined);
    await chaos?.close();
    await worker?.kill();
    await stack?.close();
  });

  it(
    `applies each of ${MESSAGES} final states exactly once despite duplicates, reordering, refusals and partial batches`,
    { timeout: APPLY_DEADLINE_MS + 600_000 },
    async () => {
      const finalNumbers = FINAL_STATUSES.map((status) => MAGIC_NUMBERS[status]);
      const sentIds: string[] = [];
      for (let offset = 0; offset < MESSAGES; offset += MAX_RECIPIENTS_PER_REQUEST) {
        const size = Math.min(MAX_RECIPIENTS_PER_REQUEST, MESSAGES - offset);
        const recipients = Array.from({ length: size }, (_, i) => finalNumbers[(offset + i) % finalNumbers.length]!);
        const sent = await stack.messaging.sms.send({ recipients, sender: 'ACME', message: `chaos ${offset}` });
        for (const m of sent.messages) sendOrder.set(m.provider_message_id, sentIds.push(m.provider_message_id));
      }
      const sentAt = Date.now();
      expect(sentIds).toHaveLength(MESSAGES);

      // Subscribers for a sample, started while events are already flowing (either may come first).
      const waiters = await Promise.all(
        sentIds
          .filter((_, i) => i % WAITER_EVERY === 0)
          .map(async (id) => ({ id, started: await stack.msgflow.awaitMessage(id) })),
      );

      // The provider's truth: every message final, as the carrier decided.
      const truth = new Map<string, string>();
      await waitFor(
        async () => {
          truth.clear();
          for await (const message of stack.messaging.messages.list({ perPage: 200 }))
            truth.set(message.id, message.status);
          return truth.size === MESSAGES && [...truth.values()].every(isFinalStatus);
        },
        'every message final in the sandbox',
        { timeoutMs: 120_000, intervalMs: 5000, failOnError: true },
      );
      const finalAt = Date.now();

      // Temporal's view, once it stops moving: all there, or no progress for two minutes.
      let seen = -1;
      let lastProgress = Date.now();
      await waitFor(
        async () => {
          // A worker that died cannot make progress: fail now, with what it said last.
          if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
            throw new Error(
              `the worker process exited (${worker.child.exitCode ?? worker.child.signalCode}); its last output:\n${worker.output().slice(-3000)}`,
            );
          }
          const count = await countWithFinalStatus(stack.temporal, stack.taskQueue);
          if (count !== seen) [seen, lastProgress] = [count, Date.now()];
          return count >= MESSAGES || Date.now() - lastProgress > STALL_MS;
        },
        'message workflows with a final status',
        { timeoutMs: APPLY_DEADLINE_MS, intervalMs: 5000, failOnError: true },
      );
      const appliedAt = Date.now();
      // A last quiet moment so late duplicates, had they started new runs, are visible too.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const verdict = reconcile(truth, await listMessageWorkflowRuns(stack.temporal, stack.taskQueue));

      // Each sampled subscriber: the provider's status, from the webhook, told exactly once.
      let waiterMismatches = 0;
      let extraNotifications = 0;
      for (const { id, started } of waiters) {
        // Bounded: a subscriber whose message was lost would otherwise wait out its 6-hour window.
        const outcome: MessageOutcome | null = await Promise.race([started.result(), sleep(60_000).then(() => null)]);
        if (!outcome || outcome.status !== truth.get(id) || outcome.source !== 'webhook') waiterMismatches++;
        if (!outcome) continue;
        const history = await stack.temporal.workflow.getHandle(started.workflowId).fetchHistory();
        const told = (history.events ?? []).filter(
          (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'messageOutcome',
        ).length;
        extraNotifications += Math.max(0, told - 1);
        if (told === 0) waiterMismatches++;
      }

      const c = chaos.counters;
      const abandoned = sandboxLog.filter((line) => line.includes('giving up')).length;
      const faults =
        c.duplicateDeliveries + c.reorderedEvents + c.refused + c.partialBatches + c.organic503 + c.batchBodies;
      printSummary(
        'webhook chaos',
        {
          events: MESSAGES,
          faults,
          duplicateDeliveries: c.duplicateDeliveries,
          reordered: c.reorderedEvents,
          refused503: c.refused,
          temporalBusy503: c.organic503,
          partialBatches: c.partialBatches,
          singleBodies: c.singleBodies,
          batchBodies: c.batchBodies,
          eventsReceived: c.eventsAccepted,
          waiters: waiters.length,
          providerFinalS: Math.round((finalAt - sentAt) / 1000),
          temporalAppliedS: Math.round((appliedAt - sentAt) / 1000),
          lost: verdict.lost + waiterMismatches,
          duplicates: verdict.duplicates + extraNotifications,
        },
        `seed ${SEED}: MSGFLOW_RELIABILITY_SEED=${SEED} repeats the fault draws; their interleaving still follows timing`,
      );

      expect(c.other5xx).toBe(0);
      expect(abandoned).toBe(0);
      expect(verdict).toMatchObject({ lost: 0, duplicates: 0 });
      expect(waiterMismatches).toBe(0);
      expect(extraNotifications).toBe(0);
      // The faults really happened (otherwise this proves nothing): every event came at least twice.
      expect(c.eventsAccepted).toBeGreaterThanOrEqual(2 * MESSAGES);
      expect(c.batchBodies).toBeGreaterThan(0);
      expect(c.duplicateDeliveries + c.refused + c.partialBatches).toBeGreaterThan(0);
    },
  );
});
