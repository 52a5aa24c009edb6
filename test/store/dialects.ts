/**
 * The two dialects for parametrised store suites: each test gets a fresh database (a new SQLite file, or a
 * new database on one real PostgreSQL server per suite).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMessageStore, type MessageStore, type MessageStoreOptions } from '../../src/store/index.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

export type Dialect = 'sqlite' | 'postgres';
/**
 * Both by default; `MSGFLOW_STORE_DIALECTS=sqlite` narrows the parametrised suites to SQLite (the mutation
 * run, which mutates the SQL layer shared by both and needs no PostgreSQL server per mutant).
 */
export const DIALECTS: Dialect[] = dialectsFrom(process.env.MSGFLOW_STORE_DIALECTS);

function dialectsFrom(setting: string | undefined): Dialect[] {
  if (!setting) return ['sqlite', 'postgres'];
  const named = setting.split(',').map((name) => name.trim());
  const unknown = named.filter((name) => name !== 'sqlite' && name !== 'postgres');
  if (unknown.length > 0) throw new Error(`MSGFLOW_STORE_DIALECTS: unknown dialect ${unknown.join(', ')}`);
  return named as Dialect[];
}

export interface DialectHarness {
  /** Where a fresh database lives: `{ file }` or `{ url }`. */
  freshLocation(): Promise<Pick<MessageStoreOptions, 'file' | 'url'>>;
  open(location: Pick<MessageStoreOptions, 'file' | 'url'>, options?: MessageStoreOptions): Promise<MessageStore>;
  /** PostgreSQL only: stops the server and starts it again on the same data. */
  restart?: () => Promise<void>;
  close(): Promise<void>;
}

let databases = 0;

export async function harness(dialect: Dialect): Promise<DialectHarness> {
  const folder = mkdtempSync(join(tmpdir(), 'msgflow-store-'));
  const server: TestPostgres | undefined = dialect === 'postgres' ? await startPostgres() : undefined;
  const opened: MessageStore[] = [];
  return {
    async freshLocation() {
      databases += 1;
      return server
        ? { url: await server.createDatabase(`store_${process.pid}_${databases}`) }
        : { file: join(folder, `store-${databases}.db`) };
    },
    async open(location, options = {}) {
      const store = await openMessageStore({ ...options, ...location });
      opened.push(store);
      return store;
    },
    ...(server
      ? {
          async restart() {
            await server.stop();
            await server.start();
          },
        }
      : {}),
    async close() {
      await Promise.allSettled(opened.map((s) => s.close()));
      await server?.destroy();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** Rows read straight from the database, bypassing the store (to see what it really wrote). */
export async function rawRows(
  location: Pick<MessageStoreOptions, 'file' | 'url'>,
  sql: string,
): Promise<Record<string, unknown>[]> {
  if (location.url) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: location.url });
    await client.connect();
    try {
      return (await client.query(sql)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  }
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(location.file!, { readonly: true });
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}
