/**
 * Where the campaign benchmark's parts run. `local` (the default): the sandbox, the ingress and the worker
 * each in a process of its own on this machine, as deployed, the ingress and worker sharing one SQLite
 * store file, on the bench's Temporal dev server. `cluster`: msgflow as run in production
 * (test/support/cluster/topology.ts): a two-node Temporal server cluster on PostgreSQL behind one address,
 * two workers, two ingresses behind a load balancer, the message store on the same PostgreSQL.
 * MSGFLOW_BENCH_TARGET chooses; another target implements `CampaignTarget` and is added to TARGETS.
 */
import type { MessageStoreOptions } from '../src/store/index.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SCOPES } from '../src/api/scopes.js';
import { MessagingClient } from '../src/client/index.js';
import { WEBHOOK_PATH } from '../src/ingress/app.js';
import { SandboxAdmin, type SandboxOptions } from '../src/sandbox/index.js';
import { freePort } from '../src/temporal/dev-server.js';
import type { BenchContext } from './harness.js';
import {
  type ClusterInfrastructure,
  startClusterInfrastructure,
  startMsgflowReplicas,
} from '../test/support/cluster/topology.js';
import { MSGFLOW_CLI, type ServiceProcess, startService } from './processes.js';

/** The provider's rate limit, lifted: the benchmark measures msgflow, not the spec's 120/min. */
const UNLIMITED_PER_MINUTE = 1_000_000;

/** The sandbox as the benchmark runs it: in memory, no rate limit, zero carrier delay. */
export const BENCH_SANDBOX: SandboxOptions = {
  port: 0,
  db: ':memory:',
  tickMs: 10,
  carrier: { submitMs: 0, finalMs: 0 },
  defaultRatePerMinute: UNLIMITED_PER_MINUTE,
  // Quick first retries, so a receiver's rare 503 under load costs a fraction of a second, not 5 s.
  webhooks: { retryScheduleMs: [200, 1_000, 5_000, 30_000, 120_000] },
};

/** The provider: a sandbox with one account (rate limit lifted) and a token for it. */
export interface Provider {
  baseUrl: string;
  token: string;
  messaging: MessagingClient;
  /** Registers `url` for every event, batched or not; answers the signing secret. */
  registerWebhook(url: string, batch: boolean): Promise<string>;
  /** Processes to account CPU time to, by name. */
  pids: Record<string, number | undefined>;
  close(): Promise<void>;
}

/** msgflow's ingress and worker, wired to a provider, its webhook registered. */
export interface Msgflow {
  taskQueue: string;
  pids: Record<string, number | undefined>;
  /** The message store's size on disk now, in bytes; undefined where the target cannot tell. */
  storeBytes(): Promise<number | undefined>;
  /** Where the message store is, to open it from the bench (e.g. to wait until every outcome was told). */
  store: MessageStoreOptions;
  close(): Promise<void>;
}

/** A Temporal the whole bench run uses, when a target brings its own instead of the dev server. */
export interface TargetTemporal {
  address: string;
  namespace: string;
  stop(): Promise<void>;
}

export interface CampaignTarget {
  name: string;
  /** Starts the target's own Temporal (once per bench run); the bench's dev server when absent. */
  startTemporal?(log: (line: string) => void): Promise<TargetTemporal>;
  startProvider(context: BenchContext): Promise<Provider>;
  startMsgflow(context: BenchContext, provider: Provider, options: { batch: boolean }): Promise<Msgflow>;
}

/** Each part a process of its own on this machine. */
const localTarget: CampaignTarget = {
  name: 'local',

  async startProvider() {
    const dir = mkdtempSync(join(tmpdir(), 'msgflow-bench-sandbox-'));
    const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
    let sandbox: ServiceProcess;
    try {
      sandbox = await startService(
        'sandbox',
        fileURLToPath(new URL('./sandbox-runner.ts', import.meta.url)),
        [JSON.stringify({ ...BENCH_SANDBOX, adminToken })],
        { cwd: dir, env: {}, ready: /sandbox listening on (http\S+)/ },
      );
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    const url = sandbox.ready[1]!;
    const baseUrl = `${url}/v1`;
    const close = async () => {
      await sandbox.stop();
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      const admin = new SandboxAdmin({ url, adminToken });
      const account = await admin.createAccount({ name: 'msgflow bench', balance: 1_000_000_000 });
      await admin.addSender(account.id, 'ACME');
      await admin.setRateLimit(account.id, UNLIMITED_PER_MINUTE);
      const { token } = await admin.createToken(account.id, { scopes: [...SCOPES], name: 'msgflow bench' });
      const messaging = new MessagingClient({ baseUrl, token });
      return {
        baseUrl,
        token,
        messaging,
        registerWebhook: async (webhookUrl, batch) =>
          (await messaging.webhooks.create({ url: webhookUrl, batch })).secret,
        pids: { sandbox: sandbox.pid },
        close,
      };
    } catch (error) {
      await close();
      throw error;
    }
  },

  async startMsgflow({ temporal }, provider, { batch }) {
    const dir = mkdtempSync(join(tmpdir(), 'msgflow-bench-store-'));
    const taskQueue = `bench-campaign-${randomUUID()}`;
    const started: ServiceProcess[] = [];
    const close = async () => {
      for (const service of started.reverse()) await service.stop();
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      const shared = {
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: temporal.namespace,
        MSGFLOW_STORE_FILE: join(dir, 'msgflow.db'),
        MSGFLOW_LOG_LEVEL: 'warn',
      };
      // The ingress's address is fixed before it listens, so the webhook (and its secret) can come first.
      const port = await freePort();
      const secret = await provider.registerWebhook(`http://127.0.0.1:${port}${WEBHOOK_PATH}`, batch);
      started.push(
        await startService('ingress', MSGFLOW_CLI, ['ingress'], {
          cwd: dir,
          env: {
            ...shared,
            MSGFLOW_INGRESS_HOST: '127.0.0.1',
            MSGFLOW_INGRESS_PORT: String(port),
            MSGFLOW_WEBHOOK_SECRETS: secret,
          },
          ready: /^ingress: http/m,
        }),
      );
      started.push(
        await startService('worker', MSGFLOW_CLI, ['worker'], {
          cwd: dir,
          env: {
            ...shared,
            // Info, for the line that says it runs; the worker logs little else at this level.
            MSGFLOW_LOG_LEVEL: 'info',
            MSGFLOW_TASK_QUEUE: taskQueue,
            MSGFLOW_API_BASE_URL: provider.baseUrl,
            MSGFLOW_API_TOKEN: provider.token,
            MSGFLOW_RATE_LIMIT_PER_MINUTE: String(UNLIMITED_PER_MINUTE),
            // The audience files the campaign bench writes.
            MSGFLOW_AUDIENCE_DIRS: tmpdir(),
          },
          ready: /worker running/,
          // It bundles the workflow code first: slow on a busy machine.
          readyTimeoutMs: 300_000,
        }),
      );
      return {
        taskQueue,
        pids: Object.fromEntries(started.map((s) => [s.name, s.pid])),
        // The database file with its write-ahead log and shared-memory index.
        store: { file: join(dir, 'msgflow.db') },
        storeBytes: async () =>
          readdirSync(dir)
            .filter((name) => name.startsWith('msgflow.db'))
            .reduce((sum, name) => sum + statSync(join(dir, name)).size, 0),
        close,
      };
    } catch (error) {
      await close();
      throw error;
    }
  },
};

/** Set by the cluster target's startTemporal: PostgreSQL and the Temporal cluster, shared by every run. */
let cluster: ClusterInfrastructure | undefined;
let storeDatabases = 0;

/** Two of each msgflow process on a Temporal server cluster, as production runs (see the header). */
const clusterTarget: CampaignTarget = {
  name: 'cluster',

  async startTemporal(log) {
    cluster = await startClusterInfrastructure({ log });
    const started = cluster;
    return {
      address: started.address,
      namespace: started.namespace,
      stop: async () => {
        await started.stop();
        cluster = undefined;
      },
    };
  },

  startProvider: (context) => localTarget.startProvider(context),

  async startMsgflow(_context, provider, { batch }) {
    if (!cluster) throw new Error('the cluster target runs on its own Temporal: startTemporal first');
    const taskQueue = `bench-campaign-${randomUUID()}`;
    const replicas = await startMsgflowReplicas(cluster, {
      taskQueue,
      apiBaseUrl: provider.baseUrl,
      apiToken: provider.token,
      registerWebhook: (url) => provider.registerWebhook(url, batch),
      storeDatabase: `bench_${++storeDatabases}_${process.pid}`,
      ratePerMinute: UNLIMITED_PER_MINUTE,
    });
    const processes = [...replicas.workers, ...replicas.ingresses, ...cluster.temporal.nodes];
    return {
      taskQueue,
      pids: Object.fromEntries(processes.map((p) => [p.name, p.pid()])),
      store: { url: replicas.storeUrl },
      storeBytes: () => databaseBytes(replicas.storeUrl),
      close: () => replicas.close(),
    };
  },
};

/** The size of the database `url` names, as PostgreSQL counts it (tables, indexes, TOAST). */
async function databaseBytes(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
    return Number(rows[0]!.bytes);
  } finally {
    await client.end();
  }
}

const TARGETS: Record<string, CampaignTarget> = { local: localTarget, cluster: clusterTarget };

export function targetFromEnv(env: NodeJS.ProcessEnv = process.env): CampaignTarget {
  const name = env.MSGFLOW_BENCH_TARGET || 'local';
  const target = TARGETS[name];
  if (!target)
    throw new Error(
      `MSGFLOW_BENCH_TARGET=${name} is not implemented; known targets: ${Object.keys(TARGETS).join(', ')}`,
    );
  return target;
}
