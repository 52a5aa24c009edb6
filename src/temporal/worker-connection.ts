/** The worker's side of connection.ts: a NativeConnection from the same Temporal settings. */
import type { NativeConnection } from '@temporalio/worker';
import type { TemporalEnv } from '../config.js';
import { connectionSettings, TemporalUnreachableError } from './connection.js';
import { loadWorkerSdk } from './worker-sdk.js';

/** The worker's connection, and the namespace its Worker polls (`checked`: as connectionSettings takes it). */
export async function connectWorkerConnection(
  env: NodeJS.ProcessEnv = process.env,
  checked?: TemporalEnv,
): Promise<{ connection: NativeConnection; namespace: string }> {
  const { namespace, ...connectionOptions } = await connectionSettings(env, checked);
  const { NativeConnection } = await loadWorkerSdk('a worker connection');
  const connection = await NativeConnection.connect(connectionOptions).catch((error: unknown) => {
    throw new TemporalUnreachableError(connectionOptions.address, error);
  });
  return { connection, namespace };
}
