/**
 * msgflow as it runs in production, on one machine: PostgreSQL; a two-node Temporal cluster on it
 * (temporal-cluster.ts) behind one address that fails over; the `default` namespace and msgflow's search
 * attributes registered as an operator does (the Temporal CLI, then `msgflow temporal setup`); two
 * `msgflow worker` and two `msgflow ingress` processes; the message store in a database of its own on the
 * same PostgreSQL; and a load balancer in front of the ingresses, which the provider delivers webhooks to.
 * Used by the cluster reliability run and by the campaign bench's `cluster` target.
 *
 * Two layers: `startClusterInfrastructure` (PostgreSQL + Temporal, minutes to set up, once) and
 * `startMsgflowReplicas` (msgflow's processes for one provider account and task queue, seconds).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { WEBHOOK_PATH } from '../../../src/ingress/app.js';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../../src/definitions/search-attributes.js';
import { resolveTemporalCli } from '../../../src/temporal/cli.js';
import { freePort } from '../../../src/temporal/dev-server.js';
import { ensureTemporalServer } from '../../../src/temporal/server-install.js';
import { MSGFLOW_CLI, type ServiceProcess, startService } from '../../../bench/processes.js';
import { startPostgres, type TestPostgres } from '../postgres.js';
import { startTcpProxy, type TcpProxy } from '../tcp-proxy.js';
import {
  type RestartableProcess,
  setUpTemporalSchema,
  startTemporalCluster,
  type TemporalCluster,
} from './temporal-cluster.js';

const run = promisify(execFile);
export const CLUSTER_NAMESPACE = 'default';
/** Two Temporal nodes keep ~80 connections open, the store's pools a few dozen more. */
const POSTGRES_SETTINGS = { max_connections: '300' };
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface ClusterInfrastructure {
  postgres: TestPostgres;
  temporal: TemporalCluster;
  /** The one address clients and workers use: the first node while it accepts connections, else the next. */
  frontendProxy: TcpProxy;
  address: string;
  namespace: string;
  stop(): Promise<void>;
}

export interface InfrastructureOptions {
  /** Progress lines (the one-time server build, setup steps). */
  log?: (line: string) => void;
  /** Every line the Temporal nodes print. */
  serverLog?: (line: string) => void;
  /** Server settings added to msgflow's own (a fault run lowers a limit). */
  dynamicConfig?: Record<string, unknown>;
}

export async function startClusterInfrastructure(options: InfrastructureOptions = {}): Promise<ClusterInfrastructure> {
  const log = options.log ?? (() => {});
  const binaries = await ensureTemporalServer({ log });
  const dir = await mkdtemp(join(tmpdir(), 'msgflow-cluster-'));
  const cleanups: Array<() => Promise<unknown>> = [() => rm(dir, { recursive: true, force: true })];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  try {
    const postgres = await startPostgres({ settings: POSTGRES_SETTINGS });
    cleanups.push(() => postgres.destroy());
    log('setting up the Temporal schema (temporal sql: create-database, setup-schema, update-schema)');
    await setUpTemporalSchema(binaries, postgres);

    // The proxy's address goes into the nodes' config, so its port is chosen first.
    const proxyPort = await freePort();
    const address = `127.0.0.1:${proxyPort}`;
    log('starting two Temporal server nodes');
    const temporal = await startTemporalCluster({
      binaries,
      postgres,
      dir,
      publicAddress: address,
      ...(options.serverLog ? { log: options.serverLog } : {}),
      ...(options.dynamicConfig ? { dynamicConfig: options.dynamicConfig } : {}),
    });
    cleanups.push(() => temporal.stop());
    const frontendProxy = await startTcpProxy(
      temporal.nodes.map((n) => n.frontend),
      { strategy: 'failover', port: proxyPort },
    );
    cleanups.push(() => frontendProxy.close());

    log(`registering namespace ${CLUSTER_NAMESPACE} and msgflow's search attributes`);
    await registerNamespace(address, CLUSTER_NAMESPACE);
    await msgflowCommand(['temporal', 'setup'], { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: CLUSTER_NAMESPACE });
    // Each node caches namespaces and search attributes (refreshed every ~10 s): ready once both know them.
    for (const node of temporal.nodes) await untilNodeKnowsNamespace(node.frontend, CLUSTER_NAMESPACE);
    return { postgres, temporal, frontendProxy, address, namespace: CLUSTER_NAMESPACE, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The Temporal CLI command an operator creates the namespace with (docker-compose.yml runs the same). */
export function namespaceCreateArgs(namespace: string): string[] {
  return ['operator', 'namespace', 'create', '--namespace', namespace, '--retention', '72h'];
}

/** As an operator does: `temporal operator namespace create` (already there is fine). */
async function registerNamespace(address: string, namespace: string): Promise<void> {
  const cli = await resolveTemporalCli();
  try {
    await run(cli, [...namespaceCreateArgs(namespace), '--address', address], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '');
    if (!/already (exists|registered)/i.test(stderr))
      throw new Error(`namespace create failed: ${stderr}`, { cause: error });
  }
}

/** `msgflow …` from source in a child process, with only `env` (plus PATH and HOME). */
async function msgflowCommand(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', TSX, MSGFLOW_CLI, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
  return stdout;
}

async function untilNodeKnowsNamespace(frontend: string, namespace: string, timeoutMs = 120_000): Promise<void> {
  const connection = Connection.lazy({ address: frontend });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await connection.workflowService.describeNamespace({ namespace });
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
        if (Object.keys(SEARCH_ATTRIBUTE_DEFINITIONS).every((name) => customAttributes?.[name] !== undefined)) return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
      if (Date.now() > deadline) throw new Error(`${frontend} does not list msgflow's search attributes`);
      await sleep(500);
    }
  } finally {
    await connection.close().catch(() => {});
  }
}

/** One msgflow process (a worker or an ingress); ready means it said so in its output. */
export interface Replica extends RestartableProcess {
  /** Stops it for good, as an operator removes a unit: a later start() (a supervisor's restart) does nothing. */
  retire(): Promise<void>;
}

function replica(name: string, args: string[], env: Record<string, string>, ready: RegExp): Replica {
  let service: ServiceProcess | undefined;
  let alive = false;
  let retired = false;
  const self: Replica = {
    name,
    pid: () => (alive ? service?.pid : undefined),
    running: () => alive,
    output: () => service?.output() ?? '',
    async start() {
      if (alive || retired) return;
      // Started in a scratch directory: a local `msgflow dev`'s .data/dev.env must not leak in.
      service = await startService(name, MSGFLOW_CLI, args, { cwd: tmpdir(), env, ready, readyTimeoutMs: 300_000 });
      alive = true;
    },
    async kill() {
      if (!alive || !service) return;
      process.kill(service.pid, 'SIGKILL');
      await service.stop();
      alive = false;
    },
    async stop() {
      if (!alive || !service) return;
      await service.stop();
      alive = false;
    },
    async retire() {
      retired = true;
      // A paused (SIGSTOPped) process would not hear SIGTERM until its grace ran out.
      if (alive && service) process.kill(service.pid, 'SIGCONT');
      await self.stop();
    },
  };
  return self;
}

export interface ReplicaOptions {
  taskQueue: string;
  /** The provider: its API and a token of the account msgflow sends from. */
  apiBaseUrl: string;
  apiToken: string;
  /** Registers the webhook URL with the provider; answers its signing secret. */
  registerWebhook(url: string): Promise<string>;
  /** The message store's database on the cluster's PostgreSQL (created here). */
  storeDatabase: string;
  workers?: number;
  ingresses?: number;
  /** The provider queue's limit across all workers (MSGFLOW_RATE_LIMIT_PER_MINUTE). */
  ratePerMinute?: number;
  /** Added to every process's environment. */
  env?: Record<string, string>;
  /** The store's URL as msgflow's processes are given it (e.g. through a proxy); `storeUrl` stays direct. */
  storeUrlVia?: (url: string) => string;
  /** Added to one process's environment, by its name (`ingress-1`, `worker-2`), after `env`. */
  envOf?: (name: string) => Record<string, string>;
}

export interface MsgflowReplicas {
  workers: Replica[];
  ingresses: Replica[];
  /** Each worker's Prometheus endpoint, in worker order. */
  workerMetricsUrls: string[];
  /**
   * A deploy's first step: as many workers of build `buildId` (this checkout's code under that build id) as
   * run now, started beside them in the same Worker Deployment. They wait for promotion (ramp or make current
   * is the caller's); `takeOver()` then makes them `workers` (named `worker-1`, …) and answers the old ones.
   */
  startBuild(buildId: string): Promise<BuildWorkers>;
  /** Each ingress's base URL (its /metrics, /readyz), in ingress order. */
  ingressUrls: string[];
  /** The load balancer's webhook URL, the one the provider delivers to. */
  webhookUrl: string;
  balancer: TcpProxy;
  storeUrl: string;
  close(): Promise<void>;
}

/** What every msgflow process of the cluster is given (docker-compose.yml sets the same variables). */
export function sharedEnv(settings: {
  address: string;
  namespace: string;
  taskQueue: string;
  storeUrl: string;
}): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: settings.address,
    TEMPORAL_NAMESPACE: settings.namespace,
    MSGFLOW_TASK_QUEUE: settings.taskQueue,
    MSGFLOW_DATABASE_URL: settings.storeUrl,
  };
}

export function workerEnv(settings: {
  apiBaseUrl: string;
  apiToken: string;
  ratePerMinute: number;
  metricsAddress: string;
}): Record<string, string> {
  return {
    MSGFLOW_API_BASE_URL: settings.apiBaseUrl,
    MSGFLOW_API_TOKEN: settings.apiToken,
    MSGFLOW_RATE_LIMIT_PER_MINUTE: String(settings.ratePerMinute),
    MSGFLOW_WORKER_METRICS_ADDRESS: settings.metricsAddress,
  };
}

export function ingressEnv(settings: { host: string; port: number; webhookSecret: string }): Record<string, string> {
  return {
    MSGFLOW_INGRESS_HOST: settings.host,
    MSGFLOW_INGRESS_PORT: String(settings.port),
    MSGFLOW_WEBHOOK_SECRETS: settings.webhookSecret,
  };
}

/** A new build's workers, started beside the running ones (see `MsgflowReplicas.startBuild`). */
export interface BuildWorkers {
  buildId: string;
  workers: Replica[];
  /** Makes them the rig's workers (`workers`, `workerMetricsUrls`) and answers the ones they replace. */
  takeOver(): Replica[];
}

export async function startMsgflowReplicas(
  infra: ClusterInfrastructure,
  options: ReplicaOptions,
): Promise<MsgflowReplicas> {
  const storeUrl = await infra.postgres.createDatabase(options.storeDatabase);
  const processStoreUrl = options.storeUrlVia?.(storeUrl) ?? storeUrl;
  const shared = {
    ...sharedEnv({
      address: infra.address,
      namespace: infra.namespace,
      taskQueue: options.taskQueue,
      storeUrl: processStoreUrl,
    }),
    // Info, for the lines that say a process is ready; msgflow logs little else at this level.
    MSGFLOW_LOG_LEVEL: 'info',
    ...options.env,
  };
  const ingressPorts = await distinctFreePorts(options.ingresses ?? 2);
  const balancer = await startTcpProxy(
    ingressPorts.map((port) => `127.0.0.1:${port}`),
    { strategy: 'round-robin' },
  );
  const webhookUrl = `http://${balancer.address}${WEBHOOK_PATH}`;
  const workers: Replica[] = [];
  const ingresses: Replica[] = [];
  /** Every worker ever started, the replaced builds' too: close() stops them all. */
  const everyWorker: Replica[] = [];
  const close = async () => {
    await Promise.all([...everyWorker, ...ingresses].map((r) => r.stop()));
    await balancer.close();
  };
  const newWorker = (name: string, metricsPort: number, extraEnv: Record<string, string> = {}) => {
    const worker = replica(
      name,
      ['worker'],
      {
        ...shared,
        ...workerEnv({
          apiBaseUrl: options.apiBaseUrl,
          apiToken: options.apiToken,
          ratePerMinute: options.ratePerMinute ?? 60_000,
          metricsAddress: `127.0.0.1:${metricsPort}`,
        }),
        // The campaign bench's audience files.
        MSGFLOW_AUDIENCE_DIRS: tmpdir(),
        ...options.envOf?.(name),
        ...extraEnv,
      },
      /worker running/,
    );
    everyWorker.push(worker);
    return worker;
  };
  try {
    const secret = await options.registerWebhook(webhookUrl);
    const own = (name: string) => options.envOf?.(name) ?? {};
    ingressPorts.forEach((port, i) =>
      ingresses.push(
        replica(
          `ingress-${i + 1}`,
          ['ingress'],
          { ...shared, ...ingressEnv({ host: '127.0.0.1', port, webhookSecret: secret }), ...own(`ingress-${i + 1}`) },
          /^ingress: http/m,
        ),
      ),
    );
    const metricsPorts = await distinctFreePorts(options.workers ?? 2, ingressPorts);
    metricsPorts.forEach((port, i) => workers.push(newWorker(`worker-${i + 1}`, port)));
    const workerMetricsUrls = metricsPorts.map((port) => `http://127.0.0.1:${port}/metrics`);
    const startBuild = async (buildId: string): Promise<BuildWorkers> => {
      const ports = await distinctFreePorts(workers.length, [
        ...ingressPorts,
        ...workerMetricsUrls.map((url) => Number(new URL(url).port)),
      ]);
      // The same names: once they take over, a fault that strikes `worker-1` strikes the live build's.
      const built = ports.map((port, i) => newWorker(`worker-${i + 1}`, port, { MSGFLOW_BUILD_ID: buildId }));
      try {
        await Promise.all(built.map((w) => w.start()));
      } catch (error) {
        await Promise.all(built.map((w) => w.retire()));
        throw error;
      }
      return {
        buildId,
        workers: built,
        takeOver() {
          const replaced = workers.splice(0, workers.length, ...built);
          workerMetricsUrls.splice(0, workerMetricsUrls.length, ...ports.map((p) => `http://127.0.0.1:${p}/metrics`));
          return replaced;
        },
      };
    };
    // Ingresses first (they create the store's tables), then the workers, which bundle their workflows.
    for (const ingress of ingresses) await ingress.start();
    await Promise.all(workers.map((w) => w.start()));
    return {
      workers,
      ingresses,
      workerMetricsUrls,
      startBuild,
      ingressUrls: ingressPorts.map((port) => `http://127.0.0.1:${port}`),
      webhookUrl,
      balancer,
      storeUrl,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function distinctFreePorts(count: number, avoid: number[] = []): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = await freePort();
    if (!ports.includes(port) && !avoid.includes(port)) ports.push(port);
  }
  return ports;
}
