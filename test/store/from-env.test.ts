/** The store's settings from the environment. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { generateKey } from '../../src/crypto/keyring.js';
import { storeOptionsFromEnv } from '../../src/store/index.js';

describe('storeOptionsFromEnv', () => {
  it('defaults to the SQLite file in the data folder', () => {
    expect(storeOptionsFromEnv({})).toEqual({ file: '.data/msgflow.db' });
    expect(storeOptionsFromEnv({ MSGFLOW_STORE_FILE: '/var/lib/msgflow/store.db' })).toEqual({
      file: '/var/lib/msgflow/store.db',
    });
  });

  it('takes PostgreSQL from MSGFLOW_DATABASE_URL and refuses other URLs', () => {
    const url = 'postgresql://msgflow:secret@db.internal:5432/msgflow';
    expect(storeOptionsFromEnv({ MSGFLOW_DATABASE_URL: url })).toEqual({ url });
    expect(() => storeOptionsFromEnv({ MSGFLOW_DATABASE_URL: 'mysql://db/msgflow' })).toThrow(
      /MSGFLOW_DATABASE_URL: expected a postgres:\/\/ or postgresql:\/\/ URL/,
    );
  });

  it('encrypts with MSGFLOW_ENCRYPTION_KEY only together with a lookup key, and says so', () => {
    const key = generateKey();
    expect(() => storeOptionsFromEnv({ MSGFLOW_ENCRYPTION_KEY: key })).toThrow(ConfigError);
    expect(() => storeOptionsFromEnv({ MSGFLOW_ENCRYPTION_KEY: key })).toThrow(/MSGFLOW_STORE_LOOKUP_KEY/);
    const lookupKey = randomBytes(32);
    const options = storeOptionsFromEnv({
      MSGFLOW_ENCRYPTION_KEY: `new:${key}`,
      MSGFLOW_STORE_LOOKUP_KEY: lookupKey.toString('base64'),
    });
    expect(options.encryption?.ring.currentId).toBe('new');
    expect(options.encryption?.lookupKey.equals(lookupKey)).toBe(true);
  });
});
