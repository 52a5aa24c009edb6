/**
 * The one data converter of every Client and Worker msgflow creates: the failure converter that moves
 * failure messages into payloads, and — when MSGFLOW_ENCRYPTION_KEY is set — the encryption codec.
 * Clients and workers must agree: a worker without the key cannot read what an encrypting client started.
 */
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { ConfigError, EncryptionEnv, parseEnv } from '../config.js';
import { type KeyRing, parseKeyRing } from '../crypto/keyring.js';
import { EncryptionCodec } from './codec.js';

const sourceExtension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
/** For `bundleWorkflowCode` and `DataConverter.failureConverterPath`. */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL(`./failure-converter.${sourceExtension}`, import.meta.url));

/** msgflow's data converter; payloads are encrypted when a key ring is given. */
export function msgflowDataConverter(ring?: KeyRing): DataConverter {
  return {
    failureConverterPath: FAILURE_CONVERTER_PATH,
    payloadCodecs: ring ? [new EncryptionCodec(ring)] : [],
  };
}

/**
 * The converter of the Nexus service's answers: Temporal's defaults, no codec and failure messages in clear,
 * since they go to callers who have none of msgflow's keys (docs/nexus.md). msgflow's histories never see it.
 */
export function nexusAnswerDataConverter(): DataConverter {
  return {};
}

/** The key ring of MSGFLOW_ENCRYPTION_KEY, or undefined when it is not set. */
export function keyRingFromEnv(env: NodeJS.ProcessEnv = process.env): KeyRing | undefined {
  return encryptionKeyRing(parseEnv(EncryptionEnv, env));
}

function encryptionKeyRing({ MSGFLOW_ENCRYPTION_KEY }: EncryptionEnv): KeyRing | undefined {
  return MSGFLOW_ENCRYPTION_KEY ? keyRingOf(MSGFLOW_ENCRYPTION_KEY) : undefined;
}

/** Parses a key (ring) spec, reporting a bad one as a configuration error that names the variable. */
export function keyRingOf(spec: string): KeyRing {
  try {
    return parseKeyRing(spec);
  } catch (error) {
    throw new ConfigError(`MSGFLOW_ENCRYPTION_KEY: ${(error as Error).message}`);
  }
}

export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter {
  return dataConverterOf(parseEnv(EncryptionEnv, env));
}

/** The data converter from settings already parsed. */
export function dataConverterOf(settings: EncryptionEnv): DataConverter {
  return msgflowDataConverter(encryptionKeyRing(settings));
}
