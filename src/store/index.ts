/**
 * The durable message store: which workflows wait for which provider message, and the status events the
 * ingress received for it. SQLite (one file, several processes on one machine) by default; PostgreSQL when
 * given a `postgres://` URL. Importing this module loads no database driver: `openMessageStore` loads the
 * one it needs.
 */
import { join } from 'node:path';
import { DATA_DIR } from '../config.js';
import type { Driver } from './driver.js';
import { migrate } from './migrate.js';
import { MIGRATIONS } from './migrations.js';
import { PersonalData } from './personal-data.js';
import { sqlMessageStore } from './sql-store.js';
import { type MessageStore, type MessageStoreOptions, StoreInputError } from './types.js';

export type * from './types.js';
export { StoreInputError } from './types.js';
export { StoreSchemaError } from './migrate.js';
export { MIGRATIONS, type Migration } from './migrations.js';
export { storeOptionsFromEnv, storeOptionsOf } from './from-env.js';
export { ARRIVAL_SPREAD_MS, budgetSettings, fullBucket, takeRequest } from './request-bucket.js';
export { startRetention, type RetentionOptions } from './retention.js';
export { outcomeFromStore } from './outcome.js';

export const DEFAULT_STORE_FILE = join(DATA_DIR, 'msgflow.db');

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** Opens (creating or upgrading its schema as needed) the store the options name. */
export async function openMessageStore(options: MessageStoreOptions = {}): Promise<MessageStore> {
  const driver = await openDriver(options);
  try {
    await migrate(driver, options.migrations ?? MIGRATIONS);
  } catch (error) {
    await driver.close();
    throw error;
  }
  return sqlMessageStore(driver, new PersonalData(options.encryption), options.hooks);
}

async function openDriver(options: MessageStoreOptions): Promise<Driver> {
  if (options.url !== undefined) {
    if (!isPostgresUrl(options.url))
      throw new StoreInputError('the store URL must start with postgres:// or postgresql://');
    const { openPostgresDriver } = await import('./postgres-driver.js');
    return openPostgresDriver(options.url, options.poolSize ?? 5);
  }
  const { openSqliteDriver } = await import('./sqlite-driver.js');
  return openSqliteDriver(options.file ?? DEFAULT_STORE_FILE, options.busyTimeoutMs ?? 5000);
}
