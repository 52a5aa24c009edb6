/**
 * OTP's keys, read from the environment: the hash key that names a session without its number (the starter's)
 * and the seal key ring codes travel sealed under (the starter seals, the worker opens). One home for both
 * sides, below the services and the worker that use it.
 */
import { randomBytes } from 'node:crypto';
import { ConfigError, EncryptionEnv, OtpEnv, parseEnv } from '../config.js';
import { generateKey, type KeyRing, KeyRingError, parseKeyRing } from './keyring.js';

/** The two secrets OTP needs outside the worker: both come from the environment (OtpEnv). */
export interface OtpKeys {
  /** HMAC-SHA256 key that turns a recipient into the opaque part of a session's workflow id. */
  hashKey: Buffer;
  /** Seals codes before they enter a workflow history; the worker opens them with the same ring. */
  sealing: KeyRing;
}

/** The seal key ring a worker opens codes with: MSGFLOW_OTP_SEAL_KEY, else MSGFLOW_ENCRYPTION_KEY, else none. */
export function otpSealKeyRingFromEnv(env: NodeJS.ProcessEnv = process.env): KeyRing | undefined {
  return otpSealKeyRingOf({ ...parseEnv(OtpEnv, env), ...parseEnv(EncryptionEnv, env) });
}

/** The seal key ring from settings already parsed. */
export function otpSealKeyRingOf({
  MSGFLOW_OTP_SEAL_KEY,
  MSGFLOW_ENCRYPTION_KEY,
}: OtpEnv & EncryptionEnv): KeyRing | undefined {
  const spec = MSGFLOW_OTP_SEAL_KEY ?? MSGFLOW_ENCRYPTION_KEY;
  if (!spec) return undefined;
  try {
    return parseKeyRing(spec);
  } catch (error) {
    if (!(error instanceof KeyRingError)) throw error;
    throw new ConfigError(
      `${MSGFLOW_OTP_SEAL_KEY ? 'MSGFLOW_OTP_SEAL_KEY' : 'MSGFLOW_ENCRYPTION_KEY'}: ${error.message}`,
    );
  }
}

/** Both OTP keys from the environment, or a ConfigError naming what is missing. */
export function otpKeysFromEnv(env: NodeJS.ProcessEnv = process.env): OtpKeys {
  const { MSGFLOW_OTP_HASH_KEY } = parseEnv(OtpEnv, env);
  const sealing = otpSealKeyRingFromEnv(env);
  if (!MSGFLOW_OTP_HASH_KEY)
    throw new ConfigError('MSGFLOW_OTP_HASH_KEY is required for OTP: base64 of at least 32 random bytes');
  if (!sealing)
    throw new ConfigError(
      'MSGFLOW_OTP_SEAL_KEY (or MSGFLOW_ENCRYPTION_KEY) is required for OTP: the key ring codes are sealed with',
    );
  return { hashKey: Buffer.from(MSGFLOW_OTP_HASH_KEY, 'base64'), sealing };
}

/** Fresh keys and their environment form, for `msgflow dev` and tests. */
export function generateOtpKeys(): {
  keys: OtpKeys;
  env: { MSGFLOW_OTP_HASH_KEY: string; MSGFLOW_OTP_SEAL_KEY: string };
} {
  const env = { MSGFLOW_OTP_HASH_KEY: randomBytes(32).toString('base64'), MSGFLOW_OTP_SEAL_KEY: generateKey() };
  return { keys: otpKeysFromEnv(env), env };
}
