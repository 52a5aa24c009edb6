/**
 * The Temporal server goes away for 10 s in the middle of a campaign and comes back on the same state
 * (its own dev server, SQLite file, same port — not the run's shared one). Meanwhile the ingress answers every
 * webhook delivery 200 from the message store and stays ready (no 503: the provider's retries are not needed),
 * its relay backs off, and after the outage it tells every untold outcome; the worker process and the clients
 * reconnect on their own. The campaign must complete with every recipient charged once and every state counted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS } from '../../src/definitions/metric-names.js';
import type { RunningStack } from '../../src/stack.js';
import { type DevServer, startDevServer } from '../../src/temporal/dev-server.js';
import { startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import {
  auditCampaign,
  campaignAudience,
  eventsOfAllRuns,
  resultAfterOutage,
  smsCharges,
} from './support/campaign-audit.js';
import { waitFor } from '../support/wait-for.js';
import { activityReport } from './support/histories.js';
import { scrapeCounter } from '../support/metrics-text.js';
import { printSummary } from './support/summary.js';

const RECIPIENTS = Number(process.env.MSGFLOW_RELIABILITY_RESTART_RECIPIENTS ?? 500);
const CHUNK = Math.max(10, Math.round(RECIPIENTS / 10));
/**
 * The worker's provider queue sends one chunk a second: sends (and so their final events, 8.2 s later) are
 * spread over the outage instead of all landing in the first second, before the server stops.
 */
const PROVIDER_REQUESTS_PER_MINUTE = 60;
const OUTAGE_MS = 10_000;
/** The provider's webhook retries span about two minutes: far beyond the outage and the restart. */
const RETRY_SCHEDULE_MS = [500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 60_000];

/** Deliveries the ingress answered with `status`, read from its Prometheus endpoint. */
function ingressDeliveries(stack: RunningStack, status: number): Promise<number> {
  return scrapeCounter(`${stack.ingress.url}/metrics`, METRICS.ingressDeliveries, { status: String(status) });
}

describe('campaign through a Temporal server restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'campaign-restart-'));
  const dbFile = join(dir, 'temporal.db');
  let server: DevServer;
  let stack: RunningStack;
  const workers: WorkerProcess[] = [];
  const sandboxLog: string[] = [];
  beforeAll(async () => {
    server = await startDevServer({ dbFile });
    stack = await startTestStack({
      temporal: { address: server.address, namespace: server.namespace },
      startWorker: false,
      // Outcomes 8.2 s after each send: the final events of the chunk sent just before the stop arrive while
      // the server is down, however long its graceful stop takes (up to 5 s, serving meanwhile).
      // The ingress answers from the store whatever Temporal's state; a 503 would make the provider retry.
      sandbox: {
        log: (line) => sandboxLog.push(line),
        sendLatencyMs: 100,
        carrier: { submitMs: 200, finalMs: 8_000 },
        webhooks: { retryScheduleMs: RETRY_SCHEDULE_MS, timeoutMs: 10_000 },
      },
    });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await stack?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    `completes a ${RECIPIENTS}-recipient campaign across a ${OUTAGE_MS / 1000} s outage of its Temporal server`,
    { timeout: 900_000 },
    async () => {
      const started = Date.now();
      const audience = campaignAudience(RECIPIENTS);
      const worker = startWorkerProcess(stack, {
        TEMPORAL_ADDRESS: server.address,
        TEMPORAL_NAMESPACE: server.namespace,
        MSGFLOW_RATE_LIMIT_PER_MINUTE: String(PROVIDER_REQUESTS_PER_MINUTE),
      });
      workers.push(worker);
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'restart reminder',
        audience: { type: 'inline', recipients: audience },
        chunkSize: CHUNK,
      });

      // Mid-campaign: some chunks sent, most outcomes still to come.
      await waitFor(async () => (await smsCharges(stack)) >= RECIPIENTS * 0.3, 'a third of the audience charged', {
        timeoutMs: 600_000,
      });
      const before503 = await ingressDeliveries(stack, 503);
      const port = Number(server.address.split(':').at(-1));
      // The final events due by now are held back while the server stops and released once it is down, so
      // they reach the ingress during the outage however long the graceful stop takes.
      await stack.admin.setWebhooksPaused(stack.accountId!, true);
      await server.stop();
      const stoppedAt = Date.now();
      await stack.admin.setWebhooksPaused(stack.accountId!, false);
      // Halfway through, the ingress is asked whether it is ready (what a load balancer would ask).
      const readyProbe = sleep(OUTAGE_MS / 2).then(async () => (await fetch(`${stack.ingress.url}/readyz`)).status);
      await sleep(OUTAGE_MS);
      const readyDuringOutage = await readyProbe;
      server = await startDevServer({ dbFile, port });
      const outageMs = Date.now() - stoppedAt;

      // The client's long poll may give up while the server is away: ask again until the campaign answers.
      const result = await resultAfterOutage(run);
      const audit = await auditCampaign(stack, audience, result, run.workflowId);
      const activities = activityReport(await eventsOfAllRuns(stack.temporal, run.workflowId, result.runs));
      const accepted = await ingressDeliveries(stack, 200);
      // Answers to deliveries made while the server was away.
      const refusedDuringOutage = (await ingressDeliveries(stack, 503)) - before503;
      const providerRetries = sandboxLog.filter((line) => line.includes('retrying')).length;
      const abandoned = sandboxLog.filter((line) => line.includes('giving up')).length;
      const untoldAfter = (await stack.store.outbox.backlog()).untold;
      printSummary(
        'temporal restart',
        {
          recipients: RECIPIENTS,
          faults: 1,
          outageMs,
          ingress503: refusedDuringOutage,
          deliveriesAccepted: accepted,
          providerRetries,
          deliveriesAbandoned: abandoned,
          messages: audit.charges,
          untoldAfter,
          lost: audit.lost,
          duplicates: audit.duplicates,
        },
        `${Math.round((Date.now() - started) / 1000)} s, worker process ${worker.child.exitCode === null ? 'still running' : 'exited'}`,
      );

      // Temporal's outage cost no delivery: none refused, the ingress ready throughout (it needs only the store).
      expect(refusedDuringOutage).toBe(0);
      expect(await ingressDeliveries(stack, 503)).toBe(0);
      expect(readyDuringOutage).toBe(200);
      expect((await fetch(`${stack.ingress.url}/readyz`)).status).toBe(200);
      // Every outcome recorded meanwhile was told after the outage (the campaign counted them all, below).
      expect(untoldAfter).toBe(0);
      // The same worker process carried on once the server was back (it reconnected, nobody restarted it).
      expect(worker.child.exitCode).toBeNull();
      expect(worker.child.signalCode).toBeNull();
      expect(audit).toMatchObject({ lost: 0, duplicates: 0, wrong: 0, charges: RECIPIENTS });
      expect(result).toMatchObject({ sent: RECIPIENTS, duplicates: 0 });
      expect(result.counts).toEqual({ delivered: RECIPIENTS - 4, undelivered: 1, failed: 1, rejected: 1, expired: 1 });
      expect(audit.sandboxCounts).toEqual(result.counts);
      expect(audit.storeCounts).toEqual(result.counts);
      // No delivery abandoned. (The campaign waits 6 hours before asking the provider itself, so every counted
      // outcome came by webhook, told by the relay.)
      expect(abandoned).toBe(0);
      // Each message's final event was accepted at least once (one event per delivery on this endpoint).
      expect(accepted).toBeGreaterThanOrEqual(RECIPIENTS);
      expect(activities.failed).toBe(0);
    },
  );
});
