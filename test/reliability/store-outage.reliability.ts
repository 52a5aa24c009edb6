/**
 * The message store goes away for 10 s in the middle of a campaign and comes back on the same data: a real
 * PostgreSQL server (test/support/postgres.ts) shared by the ingress (this process) and the worker (a child
 * process), stopped and started again. Meanwhile the ingress cannot record status events and answers 503
 * `store_unavailable` (the provider retries those deliveries later), and the chunk sends that reach the
 * provider cannot record their messages, so their activities fail and are retried under the same
 * idempotency key. Once the server is back, the pools reconnect on their own: the campaign must complete
 * with every recipient charged once, every state counted exactly as the provider has it (in the result and
 * in the store), and every webhook delivery of the provider eventually accepted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS } from '../../src/definitions/metric-names.js';
import type { RunningStack } from '../../src/stack.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import {
  auditCampaign,
  expectCampaignIntact,
  campaignAudience,
  eventsOfAllRuns,
  smsCharges,
} from './support/campaign-audit.js';
import { activityReport } from './support/histories.js';
import { deliveriesSettled } from './support/sandbox-deliveries.js';
import { scrapeCounter } from '../support/metrics-text.js';
import { printSummary } from './support/summary.js';

const RECIPIENTS = Number(process.env.MSGFLOW_RELIABILITY_OUTAGE_RECIPIENTS ?? 2000);
const CHUNK = Math.max(10, Math.round(RECIPIENTS / 40));
/** The worker's provider queue sends one chunk a second, so chunks are still going out when the store stops. */
const PROVIDER_REQUESTS_PER_MINUTE = 60;
const OUTAGE_MS = 10_000;
/** The provider's webhook retries span about two minutes: far beyond the outage. */
const RETRY_SCHEDULE_MS = [500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 60_000];

/** Deliveries the ingress answered with `status` (and `code`, when given), from its Prometheus endpoint. */
function ingressDeliveries(stack: RunningStack, status: number, code?: string): Promise<number> {
  return scrapeCounter(`${stack.ingress.url}/metrics`, METRICS.ingressDeliveries, {
    status: String(status),
    ...(code === undefined ? {} : { code }),
  });
}

describe('campaign through a message store (PostgreSQL) outage', () => {
  const dir = mkdtempSync(join(tmpdir(), 'store-outage-'));
  const sandboxDb = join(dir, 'sandbox.db');
  let postgres: TestPostgres;
  let stack: RunningStack;
  let worker: WorkerProcess;
  const sandboxLog: string[] = [];

  beforeAll(async () => {
    postgres = await startPostgres();
    const url = await postgres.createDatabase('msgflow_outage');
    stack = await startTestStack({
      startWorker: false,
      store: { url },
      // Outcomes 2 s after each send: the events of the chunks sent just before the stop arrive during the
      // outage, as do those of the chunks the provider accepts while it lasts.
      sandbox: {
        db: sandboxDb,
        log: (line) => sandboxLog.push(line),
        carrier: { submitMs: 200, finalMs: 2_000 },
        webhooks: { retryScheduleMs: RETRY_SCHEDULE_MS, timeoutMs: 10_000 },
      },
    });
    worker = startWorkerProcess(stack, {
      MSGFLOW_DATABASE_URL: url,
      MSGFLOW_RATE_LIMIT_PER_MINUTE: String(PROVIDER_REQUESTS_PER_MINUTE),
    });
  });
  afterAll(async () => {
    await worker?.kill();
    await stack?.close();
    await postgres?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    `completes a ${RECIPIENTS}-recipient campaign across a ${OUTAGE_MS / 1000} s outage of its message store`,
    { timeout: 900_000 },
    async () => {
      const started = Date.now();
      const audience = campaignAudience(RECIPIENTS);
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'store outage reminder',
        audience: { type: 'inline', recipients: audience },
        chunkSize: CHUNK,
      });

      // Mid-campaign: some chunks sent, most still to go.
      await waitFor(async () => (await smsCharges(stack)) >= RECIPIENTS * 0.3, 'a third of the audience charged', {
        timeoutMs: 600_000,
      });
      const before503 = await ingressDeliveries(stack, 503, 'store_unavailable');
      await postgres.stop();
      const stoppedAt = Date.now();
      await sleep(OUTAGE_MS);
      await postgres.start();
      const outageMs = Date.now() - stoppedAt;

      const result = await run.result();
      const audit = await auditCampaign(stack, audience, result, run.workflowId);
      const activities = activityReport(await eventsOfAllRuns(stack.temporal, run.workflowId, result.runs));
      const activityRetries = Object.values(activities.retriesByCause).reduce((a, b) => a + b, 0);
      // The provider keeps retrying refused deliveries after the campaign has its counts (a duplicate event,
      // a delivery refused twice): wait until none is pending, then look at how they ended.
      const { states: deliveries } = await deliveriesSettled(sandboxDb);
      const refusedDuringOutage = (await ingressDeliveries(stack, 503, 'store_unavailable')) - before503;
      const providerRetries = sandboxLog.filter((line) => line.includes('retrying')).length;
      const abandoned = sandboxLog.filter((line) => line.includes('giving up')).length;
      printSummary(
        'store outage',
        {
          recipients: RECIPIENTS,
          chunks: result.chunks,
          faults: 1,
          outageMs,
          ingress503: refusedDuringOutage,
          providerRetries,
          deliveriesAccepted: deliveries.delivered ?? 0,
          deliveriesFailed: deliveries.failed ?? 0,
          activityRetries,
          failedActivities: activities.failed,
          messages: audit.charges,
          lost: audit.lost,
          duplicates: audit.duplicates,
        },
        `${Math.round((Date.now() - started) / 1000)} s, PostgreSQL store, worker process ${worker.child.exitCode === null ? 'still running' : 'exited'}`,
      );

      // The outage was real: the ingress refused deliveries while it lasted and the provider retried them.
      expect(refusedDuringOutage).toBeGreaterThan(0);
      expect(providerRetries).toBeGreaterThan(0);
      // The same worker process carried on once the store was back (its pool reconnected, nobody restarted it).
      expect(worker.child.exitCode).toBeNull();
      expect(worker.child.signalCode).toBeNull();
      expectCampaignIntact(audit, result, RECIPIENTS, { states: deliveries, abandoned });
      // Chunk sends went on during the outage (one a second): their activities could not record their
      // messages and were retried, none given up (the retry policies have no attempt limit).
      expect(activityRetries).toBeGreaterThan(0);
      expect(activities.failed).toBe(0);
    },
  );
});
