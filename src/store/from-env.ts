/** The store's options from the environment (see StoreEnv in src/config.ts), or from settings parsed once. */
import { parseEnv, StoreEnv } from '../config.js';
import { parseKeyRing } from '../crypto/keyring.js';
import type { MessageStoreOptions } from './types.js';

export function storeOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): MessageStoreOptions {
  return storeOptionsOf(parseEnv(StoreEnv, env));
}

/** The store's options from settings already parsed. */
export function storeOptionsOf(config: StoreEnv): MessageStoreOptions {
  return {
    ...(config.MSGFLOW_DATABASE_URL ? { url: config.MSGFLOW_DATABASE_URL } : { file: config.MSGFLOW_STORE_FILE }),
    ...(config.MSGFLOW_ENCRYPTION_KEY && config.MSGFLOW_STORE_LOOKUP_KEY
      ? {
          encryption: {
            ring: parseKeyRing(config.MSGFLOW_ENCRYPTION_KEY),
            lookupKey: Buffer.from(config.MSGFLOW_STORE_LOOKUP_KEY, 'base64'),
          },
        }
      : {}),
  };
}
