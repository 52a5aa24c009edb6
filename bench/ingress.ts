/**
 * Ingress throughput: signed status events per second fully accepted (signature verified, body parsed,
 * every signal acknowledged by Temporal, 200 answered), as single-event bodies and as batches, with
 * per-request latency. The ceiling, measured in the same run against the same server, is the same number
 * of signal-with-start calls made directly with the Temporal client (what the ingress does per event,
 * minus HTTP, verification and parsing). The ceiling runs before and after the ingress cases and is
 * reported as their mean, so drift in a noisy machine shows up in both.
 *
 * No worker polls the task queue: what is measured is acceptance, not workflow execution (that would
 * compete for the same cores). The started workflows are terminated at the end.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { formatTimestamp } from '../src/api/common.js';
import { BATCH_EVENT_TYPE, type MessageStatusEvent } from '../src/api/events.js';
import { FINAL_STATUSES } from '../src/api/constants.js';
import { generateWebhookSecret, signWebhook } from '../src/api/signature.js';
import { startIngress } from '../src/ingress/server.js';
import { temporalSignaler } from '../src/ingress/signaler.js';
import { standardWebhooksVerifier } from '../src/ingress/verifier.js';
import { signalMessageWorkflow } from '../src/temporal/message-signals.js';
import { statusEventSignal } from '../src/definitions/message-status.js';
import { type Benchmark, type BenchRow, round } from './harness.js';
import { assertClean, latencyColumns, type LoadResult, runLoad, sizeFromEnv } from './load.js';

const EVENTS = sizeFromEnv('MSGFLOW_BENCH_INGRESS_EVENTS', 2000);
const CONCURRENCY = sizeFromEnv('MSGFLOW_BENCH_CONCURRENCY', 32);
const BATCH_SIZE = 100;

export const ingressBenchmark: Benchmark = {
  name: 'ingress',
  async run({ temporal, log }) {
    const taskQueue = `bench-ingress-${randomUUID()}`;
    const connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: temporal.namespace });
    const secret = generateWebhookSecret();
    const ingress = await startIngress({
      verifier: standardWebhooksVerifier([secret]),
      signaler: temporalSignaler({ client, taskQueue }),
    });
    const run = randomUUID().slice(0, 8);
    const event = (caseName: string, i: number): MessageStatusEvent => {
      const status = FINAL_STATUSES[i % FINAL_STATUSES.length]!;
      return {
        event: `message.${status}`,
        mobile_number: '+12025550100',
        provider_message_id: `bench-${run}-${caseName}-${i}`,
        status,
        timestamp: formatTimestamp(new Date()),
      };
    };
    // Bodies are signed before the clock starts: signing is the provider's cost, not the ingress's.
    const signedBodies = (caseName: string, bodies: unknown[]) =>
      bodies.map((body, i) => {
        const raw = JSON.stringify(body);
        return {
          raw,
          headers: {
            ...signWebhook([secret], `evt_${run}_${caseName}_${i}`, Math.floor(Date.now() / 1000), raw),
            'content-type': 'application/json',
          },
        };
      });
    const deliver = async ({ raw, headers }: { raw: string; headers: Record<string, string> }) => {
      const response = await fetch(ingress.webhookUrl, { method: 'POST', headers, body: raw });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`ingress answered ${response.status}: ${text}`);
    };
    const direct = (caseName: string) => (i: number) => {
      const e = event(caseName, i);
      return signalMessageWorkflow(client, taskQueue, e.provider_message_id, statusEventSignal, {
        status: e.status,
        timestamp: e.timestamp,
        eventId: `direct-${i}`,
      });
    };

    try {
      // Warm-up: connections, JIT, the server's caches.
      await runLoad(200, CONCURRENCY, direct('warmup'));

      log(`ceiling (before): ${EVENTS} signal-with-start calls`);
      const ceilingBefore = await runLoad(EVENTS, CONCURRENCY, direct('ceiling-a'));
      assertClean('ceiling', ceilingBefore);

      log(`ingress: ${EVENTS} single-event bodies`);
      const singles = signedBodies(
        'single',
        Array.from({ length: EVENTS }, (_, i) => event('single', i)),
      );
      const single = await runLoad(singles.length, CONCURRENCY, (i) => deliver(singles[i]!));
      assertClean('ingress single', single);

      const batchCount = Math.ceil(EVENTS / BATCH_SIZE);
      log(`ingress: ${batchCount} batch bodies of ${BATCH_SIZE} events`);
      const batches = signedBodies(
        'batch',
        Array.from({ length: batchCount }, (_, b) => ({
          type: BATCH_EVENT_TYPE,
          events: Array.from({ length: Math.min(BATCH_SIZE, EVENTS - b * BATCH_SIZE) }, (_, i) =>
            event('batch', b * BATCH_SIZE + i),
          ),
        })),
      );
      // Each batch body already fans out into BATCH_SIZE concurrent signals inside the ingress.
      const batchConcurrency = Math.max(1, Math.round(CONCURRENCY / 8));
      const batch = await runLoad(batches.length, batchConcurrency, (i) => deliver(batches[i]!));
      assertClean('ingress batch', batch);

      log(`ceiling (after): ${EVENTS} signal-with-start calls`);
      const ceilingAfter = await runLoad(EVENTS, CONCURRENCY, direct('ceiling-b'));
      assertClean('ceiling', ceilingAfter);

      const ceiling = (ceilingBefore.perSecond + ceilingAfter.perSecond) / 2;
      const row = (name: string, result: LoadResult, eventsPerOperation: number, concurrency: number): BenchRow => {
        const eventsPerSecond = result.perSecond * eventsPerOperation;
        return {
          case: name,
          requests: result.operations,
          concurrency,
          'events/s': round(eventsPerSecond),
          'vs ceiling': `${round((eventsPerSecond / ceiling) * 100)}%`,
          ...latencyColumns(result),
        };
      };
      return {
        title: `Ingress: signed events fully accepted per second (${EVENTS} events per case)`,
        rows: [
          row(
            'ceiling: direct signalWithStart (mean of before/after)',
            {
              ...ceilingBefore,
              perSecond: ceiling,
              latenciesMs: [...ceilingBefore.latenciesMs, ...ceilingAfter.latenciesMs],
            },
            1,
            CONCURRENCY,
          ),
          row('  ceiling, before', ceilingBefore, 1, CONCURRENCY),
          row('  ceiling, after', ceilingAfter, 1, CONCURRENCY),
          row('ingress, single-event bodies', single, 1, CONCURRENCY),
          row(`ingress, batch bodies of ${BATCH_SIZE}`, batch, BATCH_SIZE, batchConcurrency),
        ],
        notes: [
          'accepted = HTTP 200 from the ingress: signature verified, body parsed, every signal-with-start acknowledged by Temporal',
          'latency is per HTTP request (a whole batch for batch bodies), per call for the ceiling',
          'each event targets a new message workflow (signal-with-start creates it); no worker runs, so this is acceptance, not execution',
          `load generator, ingress and Temporal dev server share this machine; MSGFLOW_BENCH_INGRESS_EVENTS / MSGFLOW_BENCH_CONCURRENCY size the run`,
        ],
      };
    } finally {
      await ingress.close();
      await client.workflowService
        .startBatchOperation({
          namespace: temporal.namespace,
          jobId: `bench-cleanup-${randomUUID()}`,
          visibilityQuery: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
          reason: 'ingress benchmark finished',
          terminationOperation: { identity: 'msgflow bench' },
        })
        .catch((error: unknown) => log(`cleanup failed: ${String(error)}`));
      await connection.close();
    }
  },
};
