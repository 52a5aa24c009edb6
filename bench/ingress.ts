/**
 * Ingress throughput on the message-store path: signed status events per second accepted (signature
 * verified, body parsed, events recorded in the message store, 200 answered) and told by the relay in the
 * same process (`messageOutcomes` signals acknowledged by Temporal; the CPU clock stops once every outcome
 * was told), as single-event bodies and as batches, beside a bare Node HTTP receiver (reads the body, answers
 * 200) fed the same signed bodies by the same load generator in the same run. The store is a SQLite file, as
 * `msgflow ingress` keeps it. A quiet case sends single messages one after another, each awaited by a
 * workflow of its own (a single send, an OTP): the time from a delivery's answer to its signal's acceptance.
 *
 * The single-event line is the median of three bracketed runs (bare receiver, ingress, bare receiver). The batch
 * line is also read against a store-only reference: the same events through the store calls the ingress and
 * its relay make (record, claim, told-mark), without HTTP, signature, JSON or Temporal.
 *
 * Every message is registered beforehand as awaited by one waiting workflow per case, as a campaign's are.
 * No worker runs: what is measured is acceptance, not the workflow's handling of the signals (that would
 * compete for the same cores). The waiting workflows are terminated at the end.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { formatTimestamp } from '../src/api/common.js';
import { FINAL_STATUSES, MAX_OUTSTANDING } from '../src/api/constants.js';
import { BATCH_EVENT_TYPE, type MessageStatusEvent } from '../src/api/events.js';
import { generateWebhookSecret, signWebhook } from '../src/api/signature.js';
import { outcomeRouter, statusEventRecords } from '../src/ingress/outcome-router.js';
import { startRelay } from '../src/ingress/relay.js';
import { startIngress } from '../src/ingress/server.js';
import { standardWebhooksVerifier } from '../src/ingress/verifier.js';
import { openMessageStore } from '../src/store/index.js';
import { msgflowDataConverter } from '../src/temporal/data-converter.js';
import { postDelivered } from '../test/support/delivered-event.js';
import { startBareReceiver } from './bare-receiver.js';
import { type Benchmark, type BenchRow, percentile, round } from './harness.js';
import { assertClean, beforeAndAfter, latencyColumns, type LoadResult, type SignedBody, sizeFromEnv } from './load.js';
import { runScript } from './processes.js';

const LOAD_PROCESS = fileURLToPath(new URL('./load-process.ts', import.meta.url));

const SINGLE_EVENTS = sizeFromEnv('MSGFLOW_BENCH_INGRESS_EVENTS', 3000);
/** Enough batch bodies (300) for a rate that is not over before the machine notices. */
const BATCH_EVENTS = sizeFromEnv('MSGFLOW_BENCH_INGRESS_BATCH_EVENTS', 30_000);
/** Bodies in flight at once: the sandbox's webhook dispatcher delivers up to 16 at a time by default. */
const CONCURRENCY = sizeFromEnv('MSGFLOW_BENCH_CONCURRENCY', 64);
const BATCH_SIZE = 100;
/** Sequential single sends of the quiet case, each awaited by a workflow of its own. */
const QUIET_SENDS = sizeFromEnv('MSGFLOW_BENCH_INGRESS_QUIET_SENDS', 200);
const WARMUP_BODIES = 200;
/** Bracketed runs of the single-event case; its line is their median. */
const SINGLE_BRACKETS = 3;
const GOALS = { singleVsBare: 2.0, batchVsStoreOnly: 1.5, quietP99Ms: 20 };

/** One case's events: the waiting workflow, the events body by body, and those bodies signed. */
interface Prepared {
  workflowId: string;
  batches: MessageStatusEvent[][];
  bodies: SignedBody[];
}

/** A figure beside its goal, e.g. "≤ 1.5× store-only: met". */
const goal = (value: number, limit: number, unit: string) =>
  `≤ ${limit < 10 ? limit.toFixed(1) : limit}${unit}: ${value <= limit ? 'met' : 'not met'}`;

export const ingressBenchmark: Benchmark = {
  name: 'ingress',
  async run({ temporal, log }) {
    const dir = mkdtempSync(join(tmpdir(), 'msgflow-bench-ingress-'));
    const store = await openMessageStore({ file: join(dir, 'msgflow.db') });
    const connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: temporal.namespace, dataConverter: msgflowDataConverter() });
    const taskQueue = `bench-ingress-${randomUUID()}`;
    const secret = generateWebhookSecret();
    let signals = { count: 0, outcomes: 0 };
    /** When the relay's signal to each workflow was accepted (the quiet case). */
    const signalledAt = new Map<string, number>();
    const relay = startRelay({
      store,
      client,
      onSignal: (outcomes, workflowId) => {
        signals.count += 1;
        signals.outcomes += outcomes;
        signalledAt.set(workflowId, performance.now());
      },
    });
    const ingress = await startIngress({
      verifier: standardWebhooksVerifier([secret]),
      router: outcomeRouter({ store, relay }),
    });
    const bare = await startBareReceiver();
    const waiters: string[] = [];
    const run = randomUUID().slice(0, 8);

    /** N events for new messages, awaited by a new waiting workflow, in bodies of `perBody` events. */
    const prepare = async (caseName: string, events: number, perBody: number): Promise<Prepared> => {
      const workflowId = `bench-ingress-waiter-${run}-${caseName}`;
      // Never picked up (no worker polls this queue): it only has to be open to take signals.
      await client.workflow.start('benchOutcomeWaiter', { workflowId, taskQueue, args: [] });
      waiters.push(workflowId);
      const ids = Array.from({ length: events }, (_, i) => `bench-${run}-${caseName}-${i}`);
      await store.register(
        workflowId,
        ids.map((providerMessageId) => ({ providerMessageId })),
      );
      const event = (id: string, i: number): MessageStatusEvent => {
        const status = FINAL_STATUSES[i % FINAL_STATUSES.length]!;
        return {
          event: `message.${status}`,
          mobile_number: '+12025550100',
          provider_message_id: id,
          status,
          timestamp: formatTimestamp(new Date()),
        };
      };
      const batches = Array.from({ length: Math.ceil(events / perBody) }, (_, b) =>
        ids.slice(b * perBody, (b + 1) * perBody).map((id, i) => event(id, b * perBody + i)),
      );
      // Signed before the clock starts: signing is the provider's cost, not the receiver's.
      const bodies = batches.map((batch, i) => {
        const raw = JSON.stringify(perBody === 1 ? batch[0] : { type: BATCH_EVENT_TYPE, events: batch });
        const headers = signWebhook([secret], `evt_${run}_${caseName}_${i}`, Math.floor(Date.now() / 1000), raw);
        return { raw, headers: { ...headers, 'content-type': 'application/json' } };
      });
      return { workflowId, batches, bodies };
    };
    /** Writes the load generator's input: the bodies to POST and where. */
    const loadFile = (url: string, bodies: SignedBody[]): string => {
      const file = join(dir, 'load.json');
      writeFileSync(file, JSON.stringify({ url, bodies }));
      return file;
    };
    /** POSTs every body of the file from a process of its own (bench/load-process.ts); answers its LoadResult. */
    const load = async (file: string): Promise<LoadResult> =>
      JSON.parse(await runScript(LOAD_PROCESS, [file, String(CONCURRENCY)])) as LoadResult;
    /**
     * The load comes from a process of its own, so the CPU time this process uses meanwhile is the
     * receiver's: the ingress with its store, relay and Temporal client, or the bare receiver.
     */
    const measure = async (name: string, url: string, bodies: SignedBody[]) => {
      log(`${name}: ${bodies.length} bodies`);
      signals = { count: 0, outcomes: 0 };
      // Written before the clock starts: serializing the load is the bench's work, not the receiver's.
      const file = loadFile(url, bodies);
      const cpuBefore = process.cpuUsage();
      const result = await load(file);
      // The CPU clock stops once every outcome was told, the relay's work included.
      while ((await store.outbox.backlog()).untold > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      const { user, system } = process.cpuUsage(cpuBefore);
      assertClean(name, result);
      // A copy: the quiet case that follows keeps counting into `signals`.
      return { result, signals: { ...signals }, cpuMs: (user + system) / 1000 };
    };

    type Measured = Awaited<ReturnType<typeof measure>>;

    /**
     * The store-only reference: the case's events through the store calls the ingress and its relay make, one
     * after another in this process. Each body is recorded as the ingress records it (one `recordEvents`; its
     * group commit may join several bodies in one), and each time as many outcomes wait as the ingress's relay
     * told in one signal, the workflow is claimed and its outcomes marked told, as the relay does.
     */
    const storeOnly = async ({ workflowId, batches }: Prepared, outcomesPerSignal: number) => {
      log(`store-only reference: ${batches.flat().length} events`);
      const owner = `bench-store-only-${run}`;
      let tellCpuMicros = 0;
      const tell = async () => {
        const before = process.cpuUsage();
        const claimed = await store.outbox.claim([workflowId], {
          owner,
          leaseMs: 15_000,
          minIntervalMs: 0,
          maxOutcomes: MAX_OUTSTANDING,
        });
        const told = claimed.outcomes.map((w) => ({
          workflowId: w.workflowId,
          providerMessageIds: w.outcomes.map((o) => o.providerMessageId),
        }));
        await store.outbox.finish(owner, { told, ended: [], refused: [], failed: [] });
        const { user, system } = process.cpuUsage(before);
        tellCpuMicros += user + system;
      };
      let untold = 0;
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      for (const [i, events] of batches.entries()) {
        await store.recordEvents(statusEventRecords(events, `evt_${run}_store-only_${i}`));
        untold += events.length;
        if (untold >= outcomesPerSignal) {
          await tell();
          untold = 0;
        }
      }
      if (untold > 0) await tell();
      const { user, system } = process.cpuUsage(cpuBefore);
      const seconds = (performance.now() - started) / 1000;
      const left = (await store.outbox.backlog()).untold;
      if (left > 0) throw new Error(`store-only reference: ${left} outcomes left untold`);
      const cpuMs = (user + system) / 1000;
      return { bodies: batches.length, events: batches.flat().length, seconds, cpuMs, tellCpuMs: tellCpuMicros / 1000 };
    };

    /**
     * Sequential single sends, each awaited by a workflow of its own: for each, the time from the 200 to its
     * workflow's signal being accepted by Temporal.
     */
    const quiet = async (label: string, sends: number): Promise<number[]> => {
      const delays: number[] = [];
      for (let i = 0; i < sends; i++) {
        const workflowId = `bench-ingress-${label}-${run}-${i}`;
        await client.workflow.start('benchOutcomeWaiter', { workflowId, taskQueue, args: [] });
        waiters.push(workflowId);
        const id = `bench-${run}-${label}-${i}`;
        await store.register(workflowId, [{ providerMessageId: id }]);
        const response = await postDelivered(ingress.webhookUrl, secret, id);
        const answeredAt = performance.now();
        if (response.status !== 200) throw new Error(`quiet case: delivery ${i} answered ${response.status}`);
        while (!signalledAt.has(workflowId)) await new Promise((resolve) => setImmediate(resolve));
        delays.push(Math.max(0, signalledAt.get(workflowId)! - answeredAt));
      }
      return delays;
    };

    try {
      // Warm-up: connections, JIT, the store's statements, the server's caches.
      const { bodies: warmup } = await prepare('warmup', WARMUP_BODIES, 1);
      await load(loadFile(ingress.webhookUrl, warmup));
      await load(loadFile(bare.url, warmup));

      /** The ingress case between two runs of the bare receiver on the same bodies, which count as one. */
      const bracketed = async (kind: string, bodies: SignedBody[]) => {
        const before = await measure(`bare receiver, ${kind} (before)`, bare.url, bodies);
        const measured = await measure(`ingress, ${kind}`, ingress.webhookUrl, bodies);
        const after = await measure(`bare receiver, ${kind} (after)`, bare.url, bodies);
        const ceiling: Measured = {
          result: beforeAndAfter(before.result, after.result),
          signals: before.signals,
          cpuMs: before.cpuMs + after.cpuMs,
        };
        return { ceiling, measured };
      };
      const cpuMsPerEvent = ({ cpuMs, result }: Measured, eventsPerBody: number) =>
        cpuMs / (result.operations * eventsPerBody);
      const cpuVsBare = ({ ceiling, measured }: Bracket, eventsPerBody: number) =>
        cpuMsPerEvent(measured, eventsPerBody) / cpuMsPerEvent(ceiling, eventsPerBody);
      type Bracket = Awaited<ReturnType<typeof bracketed>>;

      // Fresh messages for each bracket: an event already recorded would cost the ingress less.
      const singleRuns: Bracket[] = [];
      for (let i = 1; i <= SINGLE_BRACKETS; i++)
        singleRuns.push(
          await bracketed(
            `single-event bodies, ${i} of ${SINGLE_BRACKETS}`,
            (await prepare(`single-${i}`, SINGLE_EVENTS, 1)).bodies,
          ),
        );
      const singleRatios = singleRuns.map((r) => cpuVsBare(r, 1));
      // The bracket whose ratio is the median stands for the line.
      const singles = singleRuns[singleRatios.indexOf(percentile(singleRatios, 50))]!;
      const batches = await bracketed('batch bodies', (await prepare('batch', BATCH_EVENTS, BATCH_SIZE)).bodies);
      log(`quiet: ${QUIET_SENDS} sequential single sends`);
      await quiet('quiet-warmup', 10);
      const quietDelays = await quiet('quiet', QUIET_SENDS);
      // Last, with the relay stopped: its sweep would otherwise tell the reference's outcomes itself.
      await relay.close();
      const outcomesPerSignal = Math.ceil(
        batches.measured.signals.outcomes / Math.max(1, batches.measured.signals.count),
      );
      const reference = await storeOnly(await prepare('store-only', BATCH_EVENTS, BATCH_SIZE), outcomesPerSignal);

      const referenceCpuMsPerEvent = reference.cpuMs / reference.events;
      const batchVsStoreOnly = cpuMsPerEvent(batches.measured, BATCH_SIZE) / referenceCpuMsPerEvent;
      const singleVsBare = percentile(singleRatios, 50);
      const quietP99 = percentile(quietDelays, 99);
      const row = (name: string, measured: Measured, eventsPerBody: number, bareOne?: Measured): BenchRow => ({
        case: name,
        bodies: measured.result.operations,
        'events/s': round(measured.result.perSecond * eventsPerBody),
        'vs bare': bareOne ? `${round((measured.result.perSecond / bareOne.result.perSecond) * 100)}%` : '(ceiling)',
        'CPU ms/event': round(cpuMsPerEvent(measured, eventsPerBody), 4),
        'CPU vs bare': bareOne
          ? `${round(cpuMsPerEvent(measured, eventsPerBody) / cpuMsPerEvent(bareOne, eventsPerBody), 1)}×`
          : '(ceiling)',
        'CPU vs store-only': '',
        ...latencyColumns(measured.result),
        signals: bareOne ? measured.signals.count : '',
        'outcomes/signal':
          bareOne && measured.signals.count ? round(measured.signals.outcomes / measured.signals.count) : '',
        goal: '',
      });
      return {
        title: `Ingress on the message-store path beside a bare receiver and the store alone (${SINGLE_EVENTS} single events × ${SINGLE_BRACKETS} brackets, ${BATCH_EVENTS} events in batches of ${BATCH_SIZE}; concurrency ${CONCURRENCY})`,
        rows: [
          row('bare receiver, single-event bodies (mean of before/after, median bracket)', singles.ceiling, 1),
          {
            ...row(
              `ingress, single-event bodies (median of ${SINGLE_BRACKETS} brackets)`,
              singles.measured,
              1,
              singles.ceiling,
            ),
            goal: goal(round(singleVsBare, 2), GOALS.singleVsBare, '× bare'),
          },
          row(`bare receiver, batch bodies of ${BATCH_SIZE} (mean of before/after)`, batches.ceiling, BATCH_SIZE),
          {
            case: `store-only reference, the same batch events (record, claim, told-mark)`,
            bodies: reference.bodies,
            'events/s': round(reference.events / reference.seconds),
            'CPU ms/event': round(referenceCpuMsPerEvent, 4),
            'CPU vs bare': `${round(referenceCpuMsPerEvent / cpuMsPerEvent(batches.ceiling, BATCH_SIZE), 1)}×`,
            'CPU vs store-only': '(reference)',
          },
          {
            ...row(`ingress, batch bodies of ${BATCH_SIZE}`, batches.measured, BATCH_SIZE, batches.ceiling),
            'CPU vs store-only': `${round(batchVsStoreOnly, 2)}×`,
            goal: goal(round(batchVsStoreOnly, 2), GOALS.batchVsStoreOnly, '× store-only'),
          },
          {
            case: `quiet: ${QUIET_SENDS} sequential single sends, answer → signal accepted`,
            bodies: QUIET_SENDS,
            'p50 ms': round(percentile(quietDelays, 50)),
            'p99 ms': round(quietP99),
            goal: goal(round(quietP99), GOALS.quietP99Ms, ' ms p99'),
          },
        ],
        notes: [
          `single-event CPU vs bare per bracket: ${singleRatios.map((r) => `${round(r, 2)}×`).join(', ')}; the line shows the median bracket`,
          `store-only reference: ${round(reference.cpuMs)} ms of CPU for ${reference.events} events (${round(((reference.cpuMs - reference.tellCpuMs) / reference.events) * 1000)} µs an event recording, ${round((reference.tellCpuMs / reference.events) * 1000)} µs claiming and marking told), one recordEvents per body and a claim and told-mark every ${outcomesPerSignal} outcomes (as the batch case's relay told them), one call at a time in this process; no HTTP, signature, JSON or Temporal`,
          'accepted = HTTP 200 from the ingress: signature verified, body parsed, events recorded in the store (SQLite file, WAL); the relay in the same process tells the waiting workflows from the store',
          'bare receiver: a Node HTTP server that reads the body and answers 200 (no verification, no store, no Temporal), same bodies, same load generator, same concurrency',
          `each case's messages are awaited by one open workflow (as a campaign's are); the relay tells it at most twice a second, one messageOutcomes signal with all of its untold outcomes; no worker runs, so this is acceptance, not execution`,
          "latency is per HTTP request (a whole batch for batch bodies); for the quiet case, from the 200 to the relay's signal being accepted by Temporal (target p99 ≤ 20 ms)",
          'CPU ms/event: CPU time (user + system) of the process holding the receiver (for the ingress: its store and Temporal client too; not the Temporal server) during the run ÷ the events; the load generator is a process of its own (bench/load-process.ts)',
          'load generator, ingress, store and Temporal dev server share this machine; MSGFLOW_BENCH_INGRESS_EVENTS / MSGFLOW_BENCH_INGRESS_BATCH_EVENTS / MSGFLOW_BENCH_CONCURRENCY size the run',
        ],
      };
    } finally {
      await ingress.close();
      await relay.close();
      await bare.close();
      for (const workflowId of waiters)
        await client.workflow
          .getHandle(workflowId)
          .terminate('ingress benchmark finished')
          .catch((error: unknown) => log(`cleanup of ${workflowId} failed: ${String(error)}`));
      await store.close();
      await connection.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
