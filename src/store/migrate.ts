/**
 * Brings a database to the newest schema at open. Each pending migration runs in its own transaction
 * holding the migration lock (PostgreSQL: an advisory lock; SQLite: BEGIN IMMEDIATE), and checks again
 * under it, so processes opening the store at the same moment apply each migration exactly once.
 */
import type { Driver, Executor } from './driver.js';
import type { Migration } from './migrations.js';

export class StoreSchemaError extends Error {
  override name = 'StoreSchemaError';
}

const CREATE_HISTORY = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`;

async function appliedVersions(driver: Driver, tx: Executor): Promise<number[]> {
  await driver.lockForMigration(tx);
  await tx.exec(CREATE_HISTORY);
  const rows = await tx.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  return rows.map((r) => Number(r.version));
}

/** Applies what is missing and returns the database's version. */
export async function migrate(driver: Driver, migrations: readonly Migration[]): Promise<number> {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new StoreSchemaError(`migration ${i + 1} is numbered ${m.version}`);
  });
  const latest = migrations.length;
  const applied = await driver.transaction((tx) => appliedVersions(driver, tx));
  const newest = Math.max(0, ...applied);
  if (newest > latest)
    throw new StoreSchemaError(
      `the database's schema is at version ${newest}, newer than this msgflow knows (${latest}): upgrade msgflow`,
    );
  for (const migration of migrations.slice(newest)) {
    await driver.transaction(async (tx) => {
      if ((await appliedVersions(driver, tx)).includes(migration.version)) return; // another process did it
      await tx.exec(migration[driver.dialect]);
      await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        migration.version,
        migration.name,
        Date.now(),
      ]);
    });
  }
  return latest;
}
