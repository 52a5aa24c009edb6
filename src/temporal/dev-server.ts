/**
 * A Temporal dev server (`temporal server start-dev`) as a child process: loopback only, free ports,
 * msgflow's search attributes registered, stopped with its whole process group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { parseEnv, TemporalEnv } from '../config.js';
import { resolveTemporalCli } from './cli.js';
import { configuredAddress, connectionSettings, DEFAULT_NAMESPACE } from './connection.js';
import { OutputTail } from './output-tail.js';
import { searchAttributeFlags } from '../definitions/search-attributes.js';

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
/** Tries when a port we picked was taken by someone else before the server bound it. */
const PORT_ATTEMPTS = 3;

export interface DevServer {
  /** `host:port` of the frontend gRPC service. */
  address: string;
  namespace: string;
  /** Set when the Web UI runs. */
  uiUrl?: string;
  /** The server process (and process group) id; unset for a server this process did not start. */
  pid?: number;
  /** Settles when a server started here ends, for whatever reason, saying how (`exited with code 1`). */
  exited?: Promise<string>;
  /** SIGTERM to the server's process group, SIGKILL after a grace period; resolves once it is gone. */
  stop(): Promise<void>;
}

export interface DevServerOptions {
  /** Frontend gRPC port; a free one when omitted or 0. */
  port?: number;
  /** Web UI port (0: a free one); the server runs headless when omitted or false. */
  uiPort?: number | false;
  /** SQLite file that keeps the server's state across restarts; in memory when omitted. */
  dbFile?: string;
  /** Namespace to create (besides `default`) and report; `default` when omitted. */
  namespace?: string;
  /** Codec server the Web UI calls to decode payloads (`--ui-codec-endpoint`). */
  codecEndpoint?: string;
  /** Receives every line the server prints; by default they are kept only for error messages. */
  log?: (line: string) => void;
  /** A CLI to run instead of resolving one (`resolveTemporalCli`). */
  cliPath?: string;
  readyTimeoutMs?: number;
  /** Server dynamic config (`--dynamic-config-value key=json`), over DEV_SERVER_DYNAMIC_CONFIG. */
  dynamicConfig?: Record<string, string | number | boolean>;
}

/**
 * Server settings msgflow relies on; a cluster operator sets the same keys in the server's dynamic config
 * (deploy/temporal-dynamic-config.yaml, docs/temporal.md). Task-queue priority (interactive sends before
 * campaign chunks on the provider queue) takes effect on server 1.29 only with the new matcher. One partition
 * per task queue: the server splits a queue's rate across its partitions (4 by default), a partition with no
 * task waiting loses its share (campaigns reached 75-80% of the provider's limit), and priority orders only a
 * partition's own tasks. A faster transfer-queue reader: at its default of 20 reads a second per history shard
 * (the dev server has one), every step from a workflow task to the next task or activity waited up to 50 ms.
 */
export const DEV_SERVER_DYNAMIC_CONFIG = {
  'matching.useNewMatcher': true,
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
  'history.transferProcessorMaxPollRPS': 1000,
};

export class DevServerError extends Error {
  override name = 'DevServerError';
}

export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const cli = opts.cliPath ?? (await resolveTemporalCli());
  if (opts.dbFile) await mkdir(dirname(resolve(opts.dbFile)), { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const port = opts.port || (await freePort());
    const uiPort = opts.uiPort === undefined || opts.uiPort === false ? undefined : opts.uiPort || (await freePort());
    try {
      return await startOnce(cli, port, uiPort, opts);
    } catch (error) {
      const portsWerePicked = !opts.port && !opts.uiPort;
      const taken = error instanceof DevServerError && /address already in use/i.test(error.message);
      if (!(taken && portsWerePicked && attempt < PORT_ATTEMPTS)) throw error;
    }
  }
}

/**
 * The server to use: the one `env` names (TEMPORAL_ADDRESS, or a profile chosen with TEMPORAL_PROFILE or
 * TEMPORAL_CONFIG_FILE; nothing is started and `stop()` does nothing), otherwise a dev server started here.
 */
export async function ensureTemporal(
  env: NodeJS.ProcessEnv = process.env,
  opts: DevServerOptions = {},
): Promise<DevServer> {
  const address = configuredAddress(env);
  if (address) {
    const { namespace } = await connectionSettings(env);
    return { address, namespace: opts.namespace ?? namespace, stop: async () => {} };
  }
  const namespace = opts.namespace ?? parseEnv(TemporalEnv, env).TEMPORAL_NAMESPACE ?? DEFAULT_NAMESPACE;
  const cliPath = opts.cliPath ?? (await resolveTemporalCli(env));
  return startDevServer({ ...opts, namespace, cliPath });
}

async function startOnce(
  cli: string,
  port: number,
  uiPort: number | undefined,
  opts: DevServerOptions,
): Promise<DevServer> {
  const namespace = opts.namespace ?? 'default';
  const address = `${HOST}:${port}`;
  const args = ['server', 'start-dev', '--ip', HOST, '--port', String(port), '--color', 'never'];
  if (namespace !== 'default') args.push('--namespace', namespace);
  if (opts.dbFile) args.push('--db-filename', resolve(opts.dbFile));
  args.push(...(uiPort === undefined ? ['--headless'] : ['--ui-port', String(uiPort)]));
  if (opts.codecEndpoint) args.push('--ui-codec-endpoint', opts.codecEndpoint);
  args.push(...searchAttributeFlags());
  for (const [key, value] of Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...opts.dynamicConfig }))
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);

  const child = spawn(cli, args, {
    // Its own process group, so stop() reaches anything it spawns; and no TEMPORAL_* client settings,
    // which the CLI would otherwise apply to itself.
    detached: true,
    env: withoutTemporalVariables(process.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail = new OutputTail();
  tail.follow(child.stdout, opts.log);
  tail.follow(child.stderr, opts.log);
  const exited = new Promise<string>((resolveExit) => {
    child.once('error', (error) => resolveExit(`could not be started: ${error.message}`));
    child.once('exit', (code, signal) => resolveExit(`exited with ${signal ?? `code ${code}`}`));
  });
  liveServers.add(child);
  ensureExitHook();

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (isRunning(child)) {
        killGroup(child, 'SIGTERM');
        const grace = new AbortController(); // so a pending grace timer does not hold the process open
        const graceful = await Promise.race([
          exited.then(() => true),
          sleep(STOP_GRACE_MS, false, { signal: grace.signal }).catch(() => false),
        ]);
        grace.abort();
        if (!graceful) {
          killGroup(child, 'SIGKILL');
          await exited;
        }
      }
      killGroup(child, 'SIGKILL'); // anything left in the group after the leader went
      liveServers.delete(child);
    })());

  try {
    let outcome = await Promise.race([
      waitUntilServing(address, namespace, opts.readyTimeoutMs ?? READY_TIMEOUT_MS, () => isRunning(child)),
      exited,
    ]);
    if (!isRunning(child)) outcome = await exited;
    if (outcome !== undefined) throw new DevServerError(`Temporal dev server ${outcome} before serving on ${address}`);
  } catch (error) {
    await stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new DevServerError(
      `${reason} (CLI: ${cli}). Likely fix: ${likelyFix(reason, cli)}. Its last output:\n${tail}`,
    );
  }
  const uiUrl = uiPort === undefined ? undefined : `http://${HOST}:${uiPort}`;
  return { address, namespace, ...(uiUrl ? { uiUrl } : {}), ...(child.pid ? { pid: child.pid } : {}), exited, stop };
}

/** What to do about a dev server that did not start, for its error message. */
function likelyFix(reason: string, cli: string): string {
  const otherwise = 'or set TEMPORAL_ADDRESS=host:port to use a Temporal server that is already running';
  if (reason.includes('could not be started'))
    return `make ${cli} executable for this user, or set TEMPORAL_CLI_PATH to a Temporal CLI that runs; ${otherwise}`;
  return `its last output (below) says why; a port in use: choose another; ${otherwise}`;
}

const liveServers = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Last resort if our process ends without stop() (process.exit, an uncaught error): no orphan server. */
function ensureExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of liveServers) killGroup(child, 'SIGKILL');
  });
}

function isRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

/** Polls until the frontend answers and knows `namespace`; gives up when the server dies or time runs out. */
async function waitUntilServing(
  address: string,
  namespace: string,
  timeoutMs: number,
  alive: () => boolean,
): Promise<undefined> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  // One lazy connection for all attempts, closed at the end: a failed `Connection.connect` would leave a
  // channel behind per attempt.
  const connection = Connection.lazy({ address });
  try {
    while (Date.now() < deadline && alive()) {
      try {
        await connection.withDeadline(Date.now() + 2_000, async () => {
          await connection.workflowService.getSystemInfo({});
          await connection.workflowService.describeNamespace({ namespace });
        });
        return undefined;
      } catch (error) {
        lastError = error;
        await sleep(100);
      }
    }
  } finally {
    await connection.close().catch(() => {});
  }
  if (!alive()) return undefined; // the exit itself is reported by the caller
  throw new DevServerError(
    `Temporal dev server did not serve on ${address} within ${timeoutMs} ms ` +
      `(${lastError instanceof Error ? lastError.message : String(lastError)})`,
  );
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

function withoutTemporalVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('TEMPORAL_')));
}

/** A port free on the loopback interface right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}
