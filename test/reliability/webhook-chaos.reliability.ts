/**
 * Webhook chaos: 10,000 messages (MSGFLOW_CHAOS_MESSAGES) reach their final states in the real sandbox,
 * whose status events flow to the real ingress twice over — once as single bodies, once in batches from a
 * second, batch-enabled endpoint — with the sandbox duplicating and holding back (so reordering)
 * deliveries and the ingress refusing some, recording some and then "dying" before its relay tells them (no
 * answer: the provider retries, and a relay's sweep finds the untold outcomes), and half-applying some
 * batches (so the provider retries). Half the messages are sent by sendSms workflows (50 recipients each),
 * which wait for their outcomes; the other half straight through the client, a sample of them awaited by
 * awaitMessage workflows started while the events already flow. In the end the message store (a SQLite file
 * shared by the ingress and the worker process) holds each message's final status as the provider has it,
 * every waiting workflow reports each of its messages once, from the webhook, and the ledger charges each
 * message once: zero lost, zero wrong, zero duplicates.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_STATUSES, MAX_RECIPIENTS_PER_REQUEST } from '../../src/api/constants.js';
import type { SendSmsResult } from '../../src/api/workflow-io.js';
import type { MessageOutcome } from '../../src/definitions/message-outcomes.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { type ChaosIngress, startChaosIngress } from './support/chaos-ingress.js';
import {
  addVerdicts,
  allFinal,
  type DeliveredOutcome,
  providerStatuses,
  reconcileCharges,
  reconcileDelivered,
  reconcileStore,
  storedFinals,
} from './support/message-outcomes.js';
import { deliveriesSettled } from './support/sandbox-deliveries.js';
import { chosenSeed, printSummary, seededRandom } from './support/summary.js';

const MESSAGES = Number(process.env.MSGFLOW_CHAOS_MESSAGES ?? 10_000);
/** Recipients per sendSms workflow (its input's maximum). */
const PER_WORKFLOW = 50;
/** Messages sent by sendSms workflows; the rest go straight through the client. */
const VIA_WORKFLOWS = Math.floor(MESSAGES / 2 / PER_WORKFLOW) * PER_WORKFLOW;
const DIRECT = MESSAGES - VIA_WORKFLOWS;
/** One directly sent message in this many gets an awaitMessage subscriber. */
const WAITER_EVERY = 100;
const SEED = chosenSeed();
/**
 * Deadlines only stop a broken run from hanging (nothing asserts on time): the store must keep gaining
 * outcomes (STALL_MS), and the workflows answer within RESULT_WAIT_MS once the store has every outcome.
 */
const STORE_DEADLINE_MS = Math.max(600_000, MESSAGES * 120);
const STALL_MS = 120_000;
const RESULT_WAIT_MS = 120_000;

describe('webhook chaos', () => {
  let stack: RunningStack;
  let chaos: ChaosIngress;
  let worker: WorkerProcess;
  const dir = mkdtempSync(join(tmpdir(), 'webhook-chaos-'));
  /** The provider's database, a file so its deliveries can be counted at the end. */
  const sandboxDb = join(dir, 'sandbox.db');
  const sendOrder = new Map<string, number>();
  const secrets: string[] = [];
  const sandboxLog: string[] = [];
  const random = seededRandom(SEED);

  beforeAll(async () => {
    // The worker runs in its own process, so it does not share an event loop with the sandbox and the
    // ingress (this process): three processes, two cores, one store (the stack's SQLite file, which
    // startTestStack shares with worker processes).
    stack = await startTestStack({
      startWorker: false,
      sandbox: {
        db: sandboxDb,
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
      store: stack.store,
      secrets: () => secrets,
      faults: { refuseProbability: 0.02, unsignalledProbability: 0.05, partialBatchProbability: 0.2, random },
      orderOf: (id) => sendOrder.get(id),
    });
    worker = startWorkerProcess(stack);
    // The stack's endpoint (single bodies) now delivers to the chaos ingress, and a batch endpoint beside it.
    const [single] = await stack.messaging.webhooks.list().toArray();
    secrets.push(stack.webhookSecret);
    await stack.messaging.webhooks.update(single!.id, { url: chaos.ingress.webhookUrl });
    const batch = await stack.messaging.webhooks.create({ url: chaos.ingress.webhookUrl, batch: true });
    secrets.push(batch.secret);
  });

  afterAll(async () => {
    await chaos?.close();
    await worker?.kill();
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Fails at once, with what it said last, when the worker process has died: nothing could progress. */
  const workerAlive = () => {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
      throw new Error(
        `the worker process exited (${worker.child.exitCode ?? worker.child.signalCode}); its last output:\n${worker.output().slice(-3000)}`,
      );
    }
  };

  it(
    `records and delivers each of ${MESSAGES} final states exactly once despite duplicates, reordering, refusals and partial batches`,
    { timeout: STORE_DEADLINE_MS + 900_000 },
    async () => {
      const finalNumbers = FINAL_STATUSES.map((status) => MAGIC_NUMBERS[status]);
      const numberAt = (i: number) => finalNumbers[i % finalNumbers.length]!;
      const sentAt = Date.now();

      // sendSms workflows first: their sends go through the worker while the direct ones go out here.
      const workflows = await Promise.all(
        Array.from({ length: VIA_WORKFLOWS / PER_WORKFLOW }, (_, w) =>
          stack.msgflow.sendSms({
            // Distinct within a workflow (sendSms sends a repeated number once): each final state's magic
            // number, then numbers the sandbox delivers.
            recipients: Array.from({ length: PER_WORKFLOW }, (_, i) =>
              i < finalNumbers.length ? finalNumbers[i]! : `2348030${String(w * PER_WORKFLOW + i).padStart(6, '0')}`,
            ),
            sender: 'ACME',
            message: `chaos workflow ${w}`,
          }),
        ),
      );
      const directIds: string[] = [];
      for (let offset = 0; offset < DIRECT; offset += MAX_RECIPIENTS_PER_REQUEST) {
        const size = Math.min(MAX_RECIPIENTS_PER_REQUEST, DIRECT - offset);
        const recipients = Array.from({ length: size }, (_, i) => numberAt(offset + i));
        const sent = await stack.messaging.sms.send({ recipients, sender: 'ACME', message: `chaos ${offset}` });
        for (const m of sent.messages) sendOrder.set(m.provider_message_id, directIds.push(m.provider_message_id));
      }
      expect(directIds).toHaveLength(DIRECT);

      // Subscribers for a sample, started while events are already flowing (either may come first).
      const waiters = await Promise.all(
        directIds
          .filter((_, i) => i % WAITER_EVERY === 0)
          .map(async (id) => ({ id, started: await stack.msgflow.awaitMessage(id) })),
      );

      // The provider's truth: every message final, as the carrier decided.
      let truth = new Map<string, string>();
      await waitFor(
        async () => {
          workerAlive();
          truth = await providerStatuses(stack.messaging);
          return truth.size === MESSAGES && allFinal(truth);
        },
        'every message final in the sandbox',
        { timeoutMs: 300_000, intervalMs: 5000, failOnError: true },
      );
      const finalAt = Date.now();

      // The store's view, once it stops moving: all there, or no progress for two minutes.
      const allIds = [...truth.keys()];
      let seen = -1;
      let lastProgress = Date.now();
      await waitFor(
        async () => {
          workerAlive();
          const count = await storedFinals(stack.store, allIds);
          if (count !== seen) [seen, lastProgress] = [count, Date.now()];
          return count >= MESSAGES || Date.now() - lastProgress > STALL_MS;
        },
        'a final outcome in the store for every message',
        { timeoutMs: STORE_DEADLINE_MS, intervalMs: 2000, failOnError: true },
      );
      const recordedAt = Date.now();

      // What the waiting workflows were told: bounded, a workflow whose outcome was lost would wait 6 hours.
      const bounded = <T>(result: Promise<T>) =>
        Promise.race([result, sleep(RESULT_WAIT_MS).then(() => null)]).catch(() => null);
      const results = await Promise.all(workflows.map((w) => bounded<SendSmsResult>(w.result())));
      const outcomes = await Promise.all(waiters.map((w) => bounded<MessageOutcome>(w.started.result())));
      const doneAt = Date.now();
      const workflowIds = results.flatMap((r) => r?.messages.map((m) => m.provider_message_id) ?? []);
      const fromWorkflows: DeliveredOutcome[] = results.flatMap(
        (r) => r?.messages.map((m) => ({ providerMessageId: m.provider_message_id, ...m })) ?? [],
      );
      const fromWaiters = outcomes.filter((o): o is MessageOutcome => o !== null);
      const unanswered = results.filter((r) => r === null).length + outcomes.filter((o) => o === null).length;

      // The provider delivers the second copy of each event (the other endpoint, a retry after a refusal)
      // on its own schedule: let it finish, so every delivery is counted and none failed.
      const { states: deliveries } = await deliveriesSettled(sandboxDb);
      const stored = await reconcileStore(stack.store, truth);
      const delivered = addVerdicts(
        reconcileDelivered(truth, workflowIds, fromWorkflows),
        reconcileDelivered(
          truth,
          waiters.map((w) => w.id),
          fromWaiters,
        ),
      );
      const charged = reconcileCharges(
        await stack.admin.ledger(stack.accountId!),
        [...directIds, ...workflowIds],
        truth.keys(),
      );
      const c = chaos.counters;
      const abandoned = sandboxLog.filter((line) => line.includes('giving up')).length;
      const faults =
        c.duplicateDeliveries +
        c.reorderedEvents +
        c.refused +
        c.unsignalled +
        c.partialBatches +
        c.organic503 +
        c.batchBodies;
      printSummary(
        'webhook chaos',
        {
          events: MESSAGES,
          faults,
          duplicateDeliveries: c.duplicateDeliveries,
          reordered: c.reorderedEvents,
          refused503: c.refused,
          diedBeforeTelling503: c.unsignalled,
          partialBatches: c.partialBatches,
          busy503: c.organic503,
          singleBodies: c.singleBodies,
          batchBodies: c.batchBodies,
          eventsReceived: c.eventsAccepted,
          deliveriesFailed: deliveries.failed ?? 0,
          sendSmsWorkflows: workflows.length,
          waiters: waiters.length,
          providerFinalS: Math.round((finalAt - sentAt) / 1000),
          storeRecordedS: Math.round((recordedAt - sentAt) / 1000),
          workflowsAnsweredS: Math.round((doneAt - sentAt) / 1000),
          lost: stored.lost + delivered.lost + charged.lost + unanswered,
          wrong: stored.wrong + delivered.wrong,
          duplicates: stored.duplicates + delivered.duplicates + charged.duplicates,
        },
        `seed ${SEED}: MSGFLOW_RELIABILITY_SEED=${SEED} repeats the fault draws; their interleaving still follows timing`,
      );

      expect(c.other5xx).toBe(0);
      expect(c.rejectedEvents).toBe(0);
      expect(abandoned).toBe(0);
      expect(deliveries.failed ?? 0).toBe(0);
      expect(unanswered).toBe(0);
      expect(stored).toEqual({ checked: MESSAGES, lost: 0, wrong: 0, duplicates: 0 });
      expect(delivered).toEqual({ checked: VIA_WORKFLOWS + waiters.length, lost: 0, wrong: 0, duplicates: 0 });
      expect(charged).toEqual({ checked: MESSAGES, lost: 0, wrong: 0, duplicates: 0 });
      // The faults really happened (otherwise this proves nothing): every event came at least twice.
      expect(c.eventsAccepted).toBeGreaterThanOrEqual(2 * MESSAGES);
      expect(c.batchBodies).toBeGreaterThan(0);
      expect(c.duplicateDeliveries).toBeGreaterThan(0);
      expect(c.refused + c.unsignalled + c.partialBatches).toBeGreaterThan(0);
    },
  );
});
