/**
 * Under the real limit: an `smsCampaign` against the provider's 120 requests/minute, with 3 msgflow
 * workers on the same task queues, each declaring the same provider-queue rate (the Temporal server
 * enforces it across all of them). Every provider request the workers make is counted at their HTTP
 * client: the achieved request rate as a fraction of the limit, the 429s received (target: none), and the
 * completion time beside the theoretical minimum (requests needed / rate) and beside one request per
 * recipient at the same rate.
 */
import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { MAX_RECIPIENTS_PER_REQUEST } from '../src/api/constants.js';
import { MessagingClient } from '../src/client/index.js';
import { startStack } from '../src/stack.js';
import { bundleMsgflowWorkflows, createMsgflowWorker } from '../src/worker.js';
import { type Benchmark, round } from './harness.js';

/** The spec's default limit per token. */
const LIMIT_PER_MINUTE = 120;
const WORKERS = 3;
const RECIPIENTS = Number(process.env.MSGFLOW_BENCH_RATE_LIMIT_RECIPIENTS ?? 1_200);
/** Small chunks, so the campaign needs enough requests (120 by default: a minute at the limit) to meet it for a while. */
const CHUNK = Number(process.env.MSGFLOW_BENCH_RATE_LIMIT_CHUNK ?? 10);

interface RequestLog {
  /** Start times (ms, performance clock) of every provider request, with their HTTP status. */
  requests: Array<{ at: number; status: number; path: string }>;
}

/** The platform fetch, recording each request's start time and answer. */
function countingFetch(log: RequestLog): typeof fetch {
  return async (input, init) => {
    const at = performance.now();
    const response = await fetch(input, init);
    log.requests.push({
      at,
      status: response.status,
      path: new URL(input instanceof Request ? input.url : String(input)).pathname,
    });
    return response;
  };
}

export const rateLimitBenchmark: Benchmark = {
  name: 'rate-limit',
  async run({ temporal, log }) {
    if (CHUNK > MAX_RECIPIENTS_PER_REQUEST)
      throw new Error(`MSGFLOW_BENCH_RATE_LIMIT_CHUNK must be at most ${MAX_RECIPIENTS_PER_REQUEST}`);
    const taskQueue = `bench-rate-limit-${randomUUID()}`;
    const stack = await startStack({
      temporal,
      taskQueue,
      // The sandbox at its default timings, this account at the spec's 120/min; workers started below.
      sandbox: { port: 0, db: ':memory:', log: () => {} },
      ratePerMinute: LIMIT_PER_MINUTE,
      initialBalance: 1_000_000_000,
      startWorker: false,
    });
    const requestLog: RequestLog = { requests: [] };
    const workerConnections: NativeConnection[] = [];
    const runs: Promise<void>[] = [];
    const shutdowns: Array<() => void> = [];
    try {
      const workflowBundle = await bundleMsgflowWorkflows();
      for (let i = 0; i < WORKERS; i++) {
        const workerConnection = await NativeConnection.connect({ address: temporal.address });
        workerConnections.push(workerConnection);
        const worker = await createMsgflowWorker({
          connection: workerConnection,
          namespace: temporal.namespace,
          taskQueue,
          // As `msgflow worker` does: no client-side retry, Temporal's retry policy decides.
          messaging: new MessagingClient({
            baseUrl: stack.sandbox.baseUrl,
            token: stack.token,
            maxRetries: 0,
            fetch: countingFetch(requestLog),
          }),
          // The stack's store, which its ingress records outcomes in: the workers' sends register there.
          store: stack.store,
          providerRatePerMinute: LIMIT_PER_MINUTE,
          workflowBundle,
          maxCachedWorkflows: 1_000,
        });
        runs.push(worker.run());
        shutdowns.push(() => worker.shutdown());
      }

      const audience = Array.from({ length: RECIPIENTS }, (_, i) => `2348${String(100_000_000 + i)}`);
      const started = performance.now();
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'rate-limited campaign',
        audience: { type: 'inline', recipients: audience },
        chunkSize: CHUNK,
      });
      const progress = setInterval(() => log(`${requestLog.requests.length} provider requests so far`), 15_000);
      const result = await run.result().finally(() => clearInterval(progress));
      const seconds = (performance.now() - started) / 1000;
      if (result.sent !== RECIPIENTS)
        throw new Error(
          `campaign ended with ${result.sent} sent of ${RECIPIENTS}: ${JSON.stringify(result).slice(0, 1000)}`,
        );

      const requests = requestLog.requests.filter((r) => r.at >= started);
      const rateLimited = requests.filter((r) => r.status === 429).length;
      const sends = requests.filter((r) => r.path.endsWith('/sms/send') && r.status < 300).length;
      // Achieved rate over the span the campaign was making requests (first to last request).
      const spanSeconds = requests.length > 1 ? (requests.at(-1)!.at - requests[0]!.at) / 1000 : seconds;
      const achievedPerMinute = (60 * (requests.length - 1)) / spanSeconds;
      const limitPerSecond = LIMIT_PER_MINUTE / 60;
      const minimumSeconds = requests.length / limitPerSecond;
      const perRecipientSeconds = RECIPIENTS / limitPerSecond;
      const byPath = Object.entries(
        requests.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.path]: (acc[r.path] ?? 0) + 1 }), {}),
      ).map(([path, n]) => `${path} ×${n}`);

      return {
        title: `Campaign under the real limit: ${RECIPIENTS} recipients in chunks of ${CHUNK}, ${LIMIT_PER_MINUTE} requests/min, ${WORKERS} workers`,
        rows: [
          {
            case: 'achieved provider request rate',
            value: `${round(achievedPerMinute)}/min`,
            'vs limit': `${Math.round((100 * achievedPerMinute) / LIMIT_PER_MINUTE)}%`,
          },
          { case: '429 responses received (target 0)', value: rateLimited, 'vs limit': '' },
          {
            case: 'provider requests made (successful chunk sends)',
            value: `${requests.length} (${sends})`,
            'vs limit': '',
          },
          { case: 'completion time (start → all final), s', value: round(seconds), 'vs limit': '' },
          {
            case: 'theoretical minimum: requests made / rate, s',
            value: round(minimumSeconds),
            'vs limit': `${Math.round((100 * minimumSeconds) / seconds)}% of actual`,
          },
          {
            case: 'one request per recipient at the rate, s',
            value: round(perRecipientSeconds),
            'vs limit': `${round(perRecipientSeconds / seconds)}× actual`,
          },
        ],
        notes: [
          `requests by path: ${byPath.join(', ')}`,
          `each of the ${WORKERS} workers (in this process, own connections) declares maxTaskQueueActivitiesPerSecond = ${round(limitPerSecond, 2)} on the provider queue; the Temporal server enforces it across them`,
          "achieved rate = (requests − 1) / time from the first to the last provider request; requests counted at the workers' HTTP client, whatever their answer",
          `sandbox at its default timings; the account's limit is the spec's ${LIMIT_PER_MINUTE}/min per token; Temporal dev server on this machine`,
        ],
      };
    } finally {
      for (const shutdown of shutdowns) shutdown();
      await Promise.allSettled(runs);
      for (const c of workerConnections) await c.close();
      await stack.close();
    }
  },
};
