/**
 * One campaign through msgflow as it runs in production (test/support/cluster/topology.ts): a two-node
 * Temporal cluster on PostgreSQL behind one failover address, two workers, two ingresses behind a load
 * balancer the provider delivers to, the message store on the same PostgreSQL. During the campaign: a worker
 * is killed with SIGKILL, an ingress is killed, the Temporal node the clients were connected to is killed
 * with SIGKILL and started again, and PostgreSQL (Temporal's persistence and the store at once) stops for
 * 10 s. The campaign must complete with every recipient charged once, every state counted exactly as the
 * provider has it (in the result and in the store), and every webhook delivery eventually accepted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessagingClient } from '../../src/client/index.js';
import { METRICS } from '../../src/definitions/metric-names.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import { Msgflow } from '../../src/starter/index.js';
import type { MessageStore } from '../../src/store/index.js';
import type { ClusterInfrastructure, MsgflowReplicas } from '../support/cluster/topology.js';
import { type ClusterRig, startClusterRig } from '../support/cluster/rig.js';
import type { DeploymentStatus } from '../../src/temporal/deployment-status.js';
import { workflowBuildId } from '../../src/temporal/build-id.js';
import { runMsgflow } from '../support/cli.js';
import { dashboardQueries, metricNamesIn } from '../support/dashboard.js';
import { startPrometheus, type TestPrometheus } from '../support/prometheus.js';
import type { TestAccount, TestSandbox } from '../support/sandbox.js';
import { waitFor } from '../support/wait-for.js';
import {
  auditCampaign,
  expectCampaignIntact,
  resultAfterOutage,
  campaignAudience,
  eventsOfAllRuns,
  smsCharges,
} from './support/campaign-audit.js';
import { activityReport } from './support/histories.js';
import { deliveriesSettled } from './support/sandbox-deliveries.js';
import { printSummary } from './support/summary.js';

const RECIPIENTS = Number(process.env.MSGFLOW_RELIABILITY_CLUSTER_RECIPIENTS ?? 2000);
const CHUNK = Math.max(10, Math.round(RECIPIENTS / 40));
/** The provider queue would send two chunks a second across both workers… */
const PROVIDER_REQUESTS_PER_MINUTE = 120;
/**
 * …but the provider allows 20 a minute (fixed windows), so sends meet 429s (waited out, as in production, and the
 * dashboard's 429 panel has data) and the campaign lasts long enough for every fault to fall inside it.
 */
const PROVIDER_LIMIT_PER_MINUTE = 20;
const OUTAGE_MS = 10_000;
/** The provider's webhook retries span about two minutes: far beyond any one fault. */
const RETRY_SCHEDULE_MS = [500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 60_000];

describe('campaign through a production-shaped cluster losing a replica of each tier', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cluster-faults-'));
  const sandboxDb = join(dir, 'sandbox.db');
  const sandboxLog: string[] = [];
  let rig: ClusterRig;
  let infra: ClusterInfrastructure;
  let provider: TestSandbox;
  let account: TestAccount;
  let replicas: MsgflowReplicas;
  let store: MessageStore;
  let client: Client;
  let taskQueue: string;
  let prometheus: TestPrometheus;
  /** One value of a PromQL expression as Prometheus answers it now (0 when it has no sample). */
  const scrapedValue = async (expr: string) => Number((await prometheus.query(expr))[0]?.value[1] ?? 0);

  beforeAll(async () => {
    rig = await startClusterRig({
      log: (line) => process.stdout.write(`[cluster] ${line}\n`),
      sandbox: {
        db: sandboxDb,
        log: (line) => sandboxLog.push(line),
        // Outcomes 2 s after each send: events keep arriving while each fault lasts.
        carrier: { submitMs: 200, finalMs: 2_000 },
        webhooks: { retryScheduleMs: RETRY_SCHEDULE_MS, timeoutMs: 10_000 },
      },
      account: { balance: 100_000_000, ratePerMinute: PROVIDER_LIMIT_PER_MINUTE },
      replicas: { ratePerMinute: PROVIDER_REQUESTS_PER_MINUTE },
    });
    ({ infra, provider, account, replicas, store, client, taskQueue } = rig);
    prometheus = await startPrometheus([
      { job: 'msgflow-worker', urls: replicas.workerMetricsUrls },
      { job: 'msgflow-ingress', urls: replicas.ingressUrls.map((url) => `${url}/metrics`) },
      { job: 'temporal', urls: infra.temporal.nodes.map((node) => node.metricsUrl) },
    ]);
  }, 1_800_000);
  afterAll(async () => {
    await prometheus?.stop();
    await rig?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    `completes a ${RECIPIENTS}-recipient campaign through a worker, an ingress and a Temporal node lost and a ${OUTAGE_MS / 1000} s PostgreSQL restart`,
    { timeout: 1_200_000 },
    async () => {
      const started = Date.now();
      const messaging = new MessagingClient({ baseUrl: provider.sandbox.baseUrl, token: account.token });
      const audited = { admin: provider.admin, accountId: account.accountId, messaging, store };
      /**
       * Returns within a poll of the send that takes the charges to `share` of the audience or beyond, not
       * whenever it happens to be checked: that send's status events (due 2 s after it) are then still on their
       * way, so a fault injected now meets deliveries. (Sends come in bursts under the provider's limit: between
       * bursts, nothing would be in flight.)
       */
      const sendCharged = async (share: number) => {
        let seen = await smsCharges(audited);
        await waitFor(
          async () => {
            const now = await smsCharges(audited);
            const justSent = now > seen;
            seen = now;
            return justSent && now >= RECIPIENTS * share;
          },
          `a send taking the charges to ${share * 100}% of the audience`,
          { timeoutMs: 600_000, intervalMs: 250 },
        );
      };
      const audience = campaignAudience(RECIPIENTS);
      const run = await new Msgflow(client, taskQueue).startCampaign({
        sender: 'ACME',
        message: 'cluster reminder',
        audience: { type: 'inline', recipients: audience },
        chunkSize: CHUNK,
      });
      const restarts: Array<Promise<void>> = [];
      const [worker1] = replicas.workers;
      const [ingress1] = replicas.ingresses;
      const [node1] = infra.temporal.nodes;

      await sendCharged(0.15);
      await worker1!.kill();
      restarts.push(sleep(5_000).then(() => worker1!.start()));

      await sendCharged(0.3);
      await ingress1!.kill();
      restarts.push(sleep(5_000).then(() => ingress1!.start()));

      await sendCharged(0.45);
      // Every client and worker reached Temporal through the proxy's first node so far.
      const beforeFailover = infra.frontendProxy.connectionsPerTarget();
      await node1!.kill();
      await sleep(5_000);
      await node1!.start();
      const afterFailover = infra.frontendProxy.connectionsPerTarget();

      await sendCharged(0.6);
      await infra.postgres.stop();
      const stoppedAt = Date.now();
      await sleep(OUTAGE_MS);
      await infra.postgres.start();
      const outageMs = Date.now() - stoppedAt;

      // PostgreSQL came back moments ago: a long poll may still fail while Temporal reconnects to it.
      const result = await resultAfterOutage(run);
      await Promise.all(restarts);
      // The audit reads every message with the same account: lift its limit first.
      await provider.admin.setRateLimit(account.accountId, 60_000);
      const audit = await auditCampaign(audited, audience, result, run.workflowId);
      const activities = activityReport(await eventsOfAllRuns(client, run.workflowId, result.runs));
      const activityRetries = Object.values(activities.retriesByCause).reduce((a, b) => a + b, 0);
      const { states: deliveries } = await deliveriesSettled(sandboxDb);
      const providerRetries = sandboxLog.filter((line) => line.includes('retrying')).length;
      const abandoned = sandboxLog.filter((line) => line.includes('giving up')).length;
      // What the workers exported, as Prometheus scraped it (a restarted worker starts its counters at zero).
      const provider429 = await scrapedValue('sum(max_over_time(msgflow_provider_rate_limited_total[1h]))');
      printSummary(
        'cluster faults',
        {
          recipients: RECIPIENTS,
          chunks: result.chunks,
          faults: 4,
          temporalNodes: infra.temporal.nodes.length,
          workers: replicas.workers.length,
          ingresses: replicas.ingresses.length,
          failoverConnections: afterFailover[1]! - beforeFailover[1]!,
          pgOutageMs: outageMs,
          providerRetries,
          provider429,
          deliveriesAccepted: deliveries.delivered ?? 0,
          deliveriesFailed: deliveries.failed ?? 0,
          activityRetries,
          failedActivities: activities.failed,
          messages: audit.charges,
          lost: audit.lost,
          duplicates: audit.duplicates,
        },
        `${Math.round((Date.now() - started) / 1000)} s; kill -9 worker-1, kill -9 ingress-1, kill -9 temporal-1 + restart, PostgreSQL restart`,
      );

      // The faults were real: the first node carried the traffic, its loss moved it to the second, and deliveries
      // met a fault (at least the PostgreSQL outage) and were retried.
      expect(beforeFailover[0]).toBeGreaterThan(0);
      expect(afterFailover[1]! - beforeFailover[1]!).toBeGreaterThan(0);
      expect(providerRetries).toBeGreaterThan(0);
      expectCampaignIntact(audit, result, RECIPIENTS, { states: deliveries, abandoned });
    },
  );

  it("answers `msgflow deployment status` on the cluster's server: the workers' build current, safe to stop never", async () => {
    const answer = await runMsgflow(['deployment', 'status', '--json'], {
      cwd: dir,
      env: { TEMPORAL_ADDRESS: infra.address, TEMPORAL_NAMESPACE: infra.namespace },
    });
    expect(answer.code, answer.stderr).toBe(0);
    const status = JSON.parse(answer.stdout) as DeploymentStatus;
    expect(status).toMatchObject({ deployment: 'msgflow', currentBuildId: workflowBuildId() });
    expect(status.builds.find((b) => b.buildId === workflowBuildId())).toMatchObject({
      routing: 'current',
      safeToStop: false,
    });
  });

  it("answers every query of msgflow's Grafana dashboard from what the cluster's processes exported", async () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThanOrEqual(5);
    // Whatever the campaign met, live workers now meet 429s (three sends under a limit of one a minute), so the
    // panels of 429s and failed activities show what they count, not only zeros.
    await provider.admin.setRateLimit(account.accountId, 1);
    const msgflow = new Msgflow(client, taskQueue);
    for (const n of [1, 2, 3])
      await msgflow.sendSms({ recipients: [MAGIC_NUMBERS.delivered], sender: 'ACME', message: `dashboard ${n}` });
    await waitFor(
      async () =>
        (await scrapedValue('sum(msgflow_provider_rate_limited_total)')) > 0 &&
        (await scrapedValue('sum(temporal_activity_execution_failed_total)')) > 0,
      'a 429 and a failed activity scraped from a live worker',
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    // One more scrape of every target, so each series has two samples for `rate`.
    await sleep(3_000);
    const scraped = new Set(await prometheus.metricNames());
    const msgflowMetrics = new Set(Object.values(METRICS).flatMap((name) => [name, `${name}_total`]));
    for (const { panel, expr } of queries) {
      for (const name of metricNamesIn(expr)) {
        expect(scraped.has(name), `${panel}: ${name} is not exported by any process`).toBe(true);
        if (name.startsWith('msgflow_'))
          expect(msgflowMetrics.has(name), `${panel}: ${name} is not in METRICS`).toBe(true);
      }
      const samples = await prometheus.query(expr);
      expect(samples.length, `${panel}: ${expr} returned no data`).toBeGreaterThan(0);
      for (const { value } of samples) expect(Number.isFinite(Number(value[1])), `${panel}: ${expr}`).toBe(true);
    }
    process.stdout.write(
      `[reliability] dashboard: queries=${queries.length} answered=${queries.length} (Prometheus ${prometheus.url})\n`,
    );
  });
});
