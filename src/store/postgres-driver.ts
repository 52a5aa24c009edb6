/** PostgreSQL through node-postgres: a small pool; every store operation is one READ COMMITTED transaction. */
import type pg from 'pg';
import { importOptional } from '../optional-packages.js';
import type { Driver, Executor, SqlValue } from './driver.js';

/** BIGINT (our ms times) as numbers: they stay far below 2^53. */
function bigintsAsNumbers(types: typeof pg.types) {
  return {
    getTypeParser: ((oid: number, format?: string) =>
      oid === types.builtins.INT8
        ? (value: string) => Number(value)
        : types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
}

/** The store's SQL uses `?`; PostgreSQL numbers its parameters. None of our statements has a literal `?`. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Any constant 64-bit key, the same in every msgflow process: serialises concurrent migrations. */
const MIGRATION_LOCK_KEY = 0x6d7366_6c6f77; // "msflow"

export async function openPostgresDriver(url: string, poolSize: number): Promise<Driver> {
  const { default: pg } = await importOptional('pg', 'a PostgreSQL message store', () => import('pg'));
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: bigintsAsNumbers(pg.types) });
  // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
  pool.on('error', () => {});

  return {
    dialect: 'postgres',
    transaction: (fn) => inTransaction('BEGIN', fn),
    read: (fn) => inTransaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn),
    lockForMigration: async (tx) => void (await tx.all('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK_KEY])),
    close: () => pool.end(),
  };

  async function inTransaction<T>(begin: string, fn: (tx: Executor) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    // The pool only listens to idle clients. A checked-out one whose server goes away between two
    // statements (a FATAL "terminating connection" read with the last reply, a reset socket) emits 'error'
    // with nobody listening, which would crash the process; the next statement fails with it instead.
    let broken = false;
    const onError = () => (broken = true);
    client.on('error', onError);
    const tx: Executor = {
      all: async <T extends object>(sql: string, params: readonly SqlValue[] = []) =>
        (await client.query<T>(numbered(sql), params as SqlValue[])).rows,
      run: async (sql, params = []) => (await client.query(numbered(sql), params as SqlValue[])).rowCount ?? 0,
      exec: async (sql) => void (await client.query(sql)),
    };
    try {
      await client.query(begin);
      const result = await fn(tx);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }
}
