/**
 * What the store needs from a database: statements with `?` placeholders inside transactions. Each dialect
 * provides one (sqlite-driver.ts, postgres-driver.ts); the store's SQL is shared.
 */

export type SqlValue = string | number | null;

export interface Executor {
  all<T extends object>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** Returns the number of rows changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /** Several statements, no parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Driver {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Runs `fn` in a write transaction. SQLite: BEGIN IMMEDIATE (one writer at a time across processes).
   * PostgreSQL: READ COMMITTED; the store's statements take the row locks they need.
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  /** Runs `fn` with a consistent read-only view (no write lock). */
  read<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  /** Taken first in a migration's transaction so concurrent openers migrate one at a time. */
  lockForMigration(tx: Executor): Promise<void>;
  close(): Promise<void>;
}
