/**
 * The sandbox's SQLite database. Everything that must survive a restart lives here: accounts, token
 * hashes, the wallet ledger, messages, idempotency records, and the pending work of the carrier and the
 * webhook dispatcher (rows with a due time, so a restart simply picks them up again).
 *
 * Times are integer milliseconds since the epoch; money is integer minor units. Every listable table has
 * an AUTOINCREMENT `seq`, which never goes back or gets reused: cursors and "newest first" rest on it.
 * The schema evolves through the numbered steps in migrations.ts, so an existing file upgrades in place.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { importOptional } from '../optional-packages.js';
import { migrate } from './migrations.js';

export type Db = Database.Database;

export async function openDatabase(path: string): Promise<Db> {
  const { default: Database } = await importOptional(
    'better-sqlite3',
    'the provider sandbox',
    () => import('better-sqlite3'),
  );
  if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // WAL keeps readers and the single writer out of each other's way; NORMAL is durable across process
  // crashes (only an OS crash may lose the last transactions), which is what a sandbox needs.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  reusePreparedStatements(db);
  return db;
}

/** Past this many distinct statements the cache starts over (a few queries are built with varying filters). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Makes `db.prepare` answer the statement it compiled before for the same SQL: the handlers and the
 * dispatcher prepare at the point of use, and compiling on every call was the sandbox's largest CPU cost
 * under load. Safe because nothing holds a statement open across calls (no `iterate`) or changes its mode
 * (`pluck`, `raw`, `expand`) for the next caller.
 */
function reusePreparedStatements(db: Db): void {
  const compile = db.prepare.bind(db);
  const statements = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
      statement = compile(sql);
      statements.set(sql, statement);
    }
    return statement;
  }) as Db['prepare'];
}

/** A value kept in the settings table, created on first use (e.g. the cursor-signing secret). */
export function persistentSetting(db: Db, key: string, create: () => string): string {
  const row = db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined;
  if (row) return row.value;
  db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run(key, create());
  return (db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string }).value;
}
