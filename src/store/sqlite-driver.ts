/** SQLite through better-sqlite3: one file shared by several processes on one machine (WAL, busy timeout). */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Driver, Executor, SqlValue } from './driver.js';

export function openSqliteDriver(file: string, busyTimeoutMs: number): Driver {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
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

  // One connection: transactions of this process take turns (a transaction may await, e.g. a test hook).
  // Reads take their turn too, so none runs inside another operation's open transaction.
  let turn: Promise<unknown> = Promise.resolve();
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
      await turn;
      db.close();
    },
  };
}
