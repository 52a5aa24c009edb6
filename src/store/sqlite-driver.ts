/** SQLite through better-sqlite3: one file shared by several processes on one machine (WAL, busy timeout). */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { importOptional } from '../optional-packages.js';
import type { Driver, Executor, SqlValue } from './driver.js';

/**
 * The transactions of all SQLite stores in this process take turns. A transaction awaits between its
 * statements; if another connection of the same process began one meanwhile, its BEGIN IMMEDIATE would
 * block the thread in the busy timeout while the lock holder could never resume. Reads take their turn
 * too, so none runs inside another operation's open transaction. Other processes wait in the busy timeout.
 */
let turn: Promise<unknown> = Promise.resolve();

export async function openSqliteDriver(file: string, busyTimeoutMs: number): Promise<Driver> {
  const { default: Database } = await importOptional(
    'better-sqlite3',
    'a SQLite message store',
    () => import('better-sqlite3'),
  );
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  // The busy timeout first: switching a new file to WAL needs a lock another opener may hold.
  const db = new Database(file, { timeout: busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');

  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const tx: Executor = {
    all: async <T extends object>(sql: string, params: readonly SqlValue[] = []) => prepared(sql).all(...params) as T[],
    run: async (sql, params = []) => prepared(sql).run(...params).changes,
    exec: async (sql) => void db.exec(sql),
  };

  const inTurn = <T>(begin: string, fn: (tx: Executor) => Promise<T>): Promise<T> => {
    const run = turn.then(async () => {
      db.exec(begin);
      try {
        const result = await fn(tx);
        db.exec('COMMIT');
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    });
    turn = run.catch(() => undefined);
    return run;
  };
  return {
    dialect: 'sqlite',
    // IMMEDIATE: the write lock is taken at BEGIN, so no transaction reads a snapshot that a concurrent
    // writer then invalidates; other processes wait up to the busy timeout.
    transaction: (fn) => inTurn('BEGIN IMMEDIATE', fn),
    read: (fn) => inTurn('BEGIN', fn),
    lockForMigration: async () => {}, // BEGIN IMMEDIATE already excludes other writers
    close: async () => {
      await inTurn('BEGIN', async () => {}); // let operations already queued finish
      db.close();
    },
  };
}
