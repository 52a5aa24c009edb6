/**
 * A Temporal cluster as an operator runs one, on this machine: the Temporal server (built from
 * go.temporal.io/server, see src/temporal/server-install.ts) with PostgreSQL persistence and SQL visibility,
 * its schema set up with the server's own SQL tool (create-database, setup-schema -v 0.0, update-schema
 * from the versioned folder), and several server processes that find each other through the database's
 * cluster_membership table (no seed list: distinct ports per node, all on 127.0.0.1).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { stringify } from 'yaml';
import { OutputTail } from '../../../src/temporal/output-tail.js';
import type { TemporalServerBinaries } from '../../../src/temporal/server-install.js';
import type { TestPostgres } from '../postgres.js';

const run = promisify(execFile);
const HOST = '127.0.0.1';
/** Fixed before the first start, as Temporal requires; small, for one machine. */
const HISTORY_SHARDS = 4;
/** Connections each node's pools may open to each database (two databases, four services per node). */
const MAX_CONNS = 10;
const STOP_GRACE_MS = 10_000;

export const TEMPORAL_DATABASE = 'temporal';
export const VISIBILITY_DATABASE = 'temporal_visibility';

/** A process of the topology that a test can crash and start again with the same settings. */
export interface RestartableProcess {
  name: string;
  pid(): number | undefined;
  running(): boolean;
  /** Starts it (again, on the same ports and config) and waits until it is ready. */
  start(): Promise<void>;
  /** SIGKILL: it vanishes, as a crashed machine would. */
  kill(): Promise<void>;
  /** SIGTERM, SIGKILL after a grace period. */
  stop(): Promise<void>;
  output(): string;
}

/** A Temporal server node; ready means its frontend answers. */
export interface TemporalNode extends RestartableProcess {
  /** The node's own frontend (gRPC), `127.0.0.1:port`. */
  frontend: string;
  /** The node's Prometheus endpoint (`http://…/metrics`). */
  metricsUrl: string;
}

export interface TemporalCluster {
  nodes: TemporalNode[];
  stop(): Promise<void>;
}

export interface TemporalClusterOptions {
  binaries: TemporalServerBinaries;
  postgres: TestPostgres;
  /** Where the nodes' config files go. */
  dir: string;
  nodes?: number;
  /** The address clients reach the cluster through (recorded as the cluster's frontend in its metadata). */
  publicAddress: string;
  /** Server settings added to msgflow's (deploy/temporal-dynamic-config.yaml), each for the whole cluster. */
  dynamicConfig?: Record<string, unknown>;
  log?: (line: string) => void;
}

export interface SchemaStep {
  database: string;
  /** The SQL tool's command and its arguments, after the connection flags. */
  args: string[];
}

/**
 * The operator's schema sequence for both databases, with the versioned folders under `postgresSchema`
 * (`…/schema/postgresql/v12`): create-database, setup-schema -v 0.0, update-schema -d <versioned folder>.
 * docker-compose.yml's schema job runs the same steps (checked by test/ops/compose.test.ts).
 */
export function schemaSteps(postgresSchema: string): SchemaStep[] {
  return [
    [TEMPORAL_DATABASE, 'temporal'],
    [VISIBILITY_DATABASE, 'visibility'],
  ].flatMap(([database, folder]) => [
    { database: database!, args: ['create-database'] },
    { database: database!, args: ['setup-schema', '-v', '0.0'] },
    { database: database!, args: ['update-schema', '-d', `${postgresSchema}/${folder}/versioned`] },
  ]);
}

/** Creates both databases and brings their schemas to the server's version with the server's SQL tool. */
export async function setUpTemporalSchema(binaries: TemporalServerBinaries, postgres: TestPostgres): Promise<void> {
  for (const { database, args } of schemaSteps(binaries.postgresSchema)) {
    await sqlTool(binaries.sql, [
      ...['--plugin', 'postgres12', '--ep', HOST, '--port', String(postgres.port)],
      ...['--user', postgres.user, '--password', postgres.password, '--db', database],
      ...args,
    ]);
  }
}

async function sqlTool(sql: string, args: string[]): Promise<void> {
  try {
    await run(sql, args, { env: { PATH: process.env.PATH ?? '' } });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`temporal sql ${args.slice(-3).join(' ')} failed:\n${stderr ?? ''}${stdout ?? ''}`, {
      cause: error,
    });
  }
}

interface NodePorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
  metrics: number;
}

/** Membership ports are stored in a smallint column: every port of a node is picked below 32768. */
const PORT_RANGE = { low: 20_000, high: 32_767 };

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

async function freeLowPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = PORT_RANGE.low + Math.floor(Math.random() * (PORT_RANGE.high - PORT_RANGE.low));
    if (!taken.has(port) && (await portIsFree(port))) return port;
  }
}

/** Ports given to nodes of this process, so two nodes never get the same one. */
const usedPorts = new Set<number>();

async function pickPorts(): Promise<NodePorts> {
  const names: Array<keyof NodePorts> = [
    'frontend',
    'frontendHttp',
    'frontendMembership',
    'history',
    'historyMembership',
    'matching',
    'matchingMembership',
    'worker',
    'workerMembership',
    'metrics',
  ];
  const ports = {} as NodePorts;
  for (const name of names) {
    ports[name] = await freeLowPort(usedPorts);
    usedPorts.add(ports[name]);
  }
  return ports;
}

const DYNAMIC_CONFIG_FILE = fileURLToPath(new URL('../../../deploy/temporal-dynamic-config.yaml', import.meta.url));

/** One node's static config: the same shape for every node, only the ports differ. */
function nodeConfig(ports: NodePorts, postgres: TestPostgres, publicAddress: string, dynamicConfig: string): unknown {
  const datastore = (databaseName: string) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${HOST}:${postgres.port}`,
      connectProtocol: 'tcp',
      user: postgres.user,
      password: postgres.password,
      maxConns: MAX_CONNS,
      maxIdleConns: MAX_CONNS,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: HOST, ...extra },
  });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      numHistoryShards: HISTORY_SHARDS,
      defaultStore: 'default',
      visibilityStore: 'visibility',
      datastores: { default: datastore(TEMPORAL_DATABASE), visibility: datastore(VISIBILITY_DATABASE) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: HOST },
      metrics: {
        prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `${HOST}:${ports.metrics}` },
      },
    },
    services: {
      frontend: rpc(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: rpc(ports.history, ports.historyMembership),
      matching: rpc(ports.matching, ports.matchingMembership),
      worker: rpc(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: publicAddress },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    // The settings msgflow asks of every Temporal installation (task-queue priority, one partition per queue).
    dynamicConfigClient: { filepath: dynamicConfig, pollInterval: '10s' },
  };
}

/** Starts the nodes one after the other (the first creates the cluster's metadata), each serving when returned. */
export async function startTemporalCluster(options: TemporalClusterOptions): Promise<TemporalCluster> {
  const nodes: TemporalNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    const dynamicConfig = await writeDynamicConfig(options);
    for (let i = 1; i <= (options.nodes ?? 2); i++) {
      const node = await defineNode(`temporal-${i}`, options, dynamicConfig);
      nodes.push(node);
      await node.start();
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes, stop };
}

/** msgflow's settings file, or a copy of it with the options' settings added; answers its path. */
async function writeDynamicConfig({ dir, dynamicConfig }: TemporalClusterOptions): Promise<string> {
  if (!dynamicConfig) return DYNAMIC_CONFIG_FILE;
  const path = join(dir, 'dynamic-config.yaml');
  const added = Object.fromEntries(Object.entries(dynamicConfig).map(([key, value]) => [key, [{ value }]]));
  await writeFile(path, `${await readFile(DYNAMIC_CONFIG_FILE, 'utf8')}\n${stringify(added)}`);
  return path;
}

async function defineNode(name: string, options: TemporalClusterOptions, dynamicConfig: string): Promise<TemporalNode> {
  const ports = await pickPorts();
  const root = join(options.dir, name);
  await mkdir(join(root, 'config'), { recursive: true });
  await writeFile(
    join(root, 'config', 'node.yaml'),
    stringify(nodeConfig(ports, options.postgres, options.publicAddress, dynamicConfig)),
  );
  const frontend = `${HOST}:${ports.frontend}`;
  const tail = new OutputTail(60);
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const node: TemporalNode = {
    name,
    frontend,
    metricsUrl: `http://${HOST}:${ports.metrics}/metrics`,
    pid: () => (running() ? child?.pid : undefined),
    running,
    output: () => tail.toString(),
    async start() {
      if (running()) return;
      const started = spawn(
        options.binaries.server,
        ['--root', root, '--config', 'config', '--env', 'node', '--allow-no-auth', 'start'],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } },
      );
      child = started;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      const log = options.log ? (line: string) => options.log!(`${name}: ${line}`) : undefined;
      tail.follow(started.stdout, log);
      tail.follow(started.stderr, log);
      await waitUntilServing(frontend, running).catch(async (error: unknown) => {
        await node.stop();
        throw new Error(`${name}: ${(error as Error).message}; its last output:\n${tail}`, { cause: error });
      });
    },
    async kill() {
      if (!running()) return;
      child!.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!running()) return;
      child!.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
  return node;
}

/** Until the node's frontend answers GetSystemInfo (namespaces are registered afterwards). */
async function waitUntilServing(address: string, alive: () => boolean, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const connection = Connection.lazy({ address });
  let lastError: unknown;
  try {
    while (Date.now() < deadline) {
      if (!alive()) throw new Error('the server process exited before serving');
      try {
        await connection.withDeadline(Date.now() + 2_000, () => connection.workflowService.getSystemInfo({}));
        return;
      } catch (error) {
        lastError = error;
        await sleep(250);
      }
    }
  } finally {
    await connection.close().catch(() => {});
  }
  throw new Error(`not serving on ${address} within ${timeoutMs / 1000} s (${String(lastError)})`);
}
