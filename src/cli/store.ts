/**
 * Commands that read or change the message store open the one the worker and ingress use
 * (MSGFLOW_DATABASE_URL, or the SQLite file of `msgflow dev`), with its encryption keys.
 */
import { type MessageStore, openMessageStore, StoreInputError, storeOptionsFromEnv } from '../store/index.js';
import { InvalidNumbersError } from '../starter/suppressions.js';
import { fail } from './common.js';

export async function withStore<T>(fn: (store: MessageStore) => Promise<T>): Promise<T> {
  const store = await openMessageStore(storeOptionsFromEnv(process.env));
  try {
    return await fn(store);
  } catch (error) {
    if (error instanceof StoreInputError || error instanceof InvalidNumbersError) fail(error.message, 2);
    throw error;
  } finally {
    await store.close();
  }
}
