/**
 * A PostgreSQL connection that dies inside a transaction, between two statements (the server stopping, an
 * administrator ending the session): the transaction fails like any statement error, the process does not
 * crash on an unheard 'error' event (vitest fails a run on an uncaught one), and the pool reconnects.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresDriver } from '../../src/store/postgres-driver.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

let server: TestPostgres;
let url: string;
beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase('connection_loss');
});
afterAll(async () => {
  await server?.destroy();
});

it('fails the transaction whose connection was ended between statements, then serves the next one', async () => {
  // Awaited: the opener may load pg lazily (an optional package).
  const driver = await openPostgresDriver(url, 1);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const failed = driver.transaction(async (tx) => {
      const [session] = await tx.all<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await admin.query('SELECT pg_terminate_backend($1)', [session!.pid]);
      // The server's FATAL message reaches the client while no statement of it is running.
      await sleep(300);
      return tx.all('SELECT 1 AS one');
    });
    await expect(failed).rejects.toThrow();
    expect(await driver.read((tx) => tx.all<{ one: number }>('SELECT 1 AS one'))).toEqual([{ one: 1 }]);
  } finally {
    await admin.end();
    await driver.close();
  }
});
