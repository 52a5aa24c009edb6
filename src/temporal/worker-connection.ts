/** The worker's side of connection.ts: a NativeConnection from the same TEMPORAL_* settings. */
import type { NativeConnection } from '@temporalio/worker';
import type { TemporalEnv } from '../config.js';
import { connectionSettings, parsedEnv } from './connection.js';
import { loadWorkerSdk } from './worker-sdk.js';

/** The worker's connection (namespace goes on the Worker itself: `TEMPORAL_NAMESPACE`). */
export async function connectWorkerConnection(env?: TemporalEnv): Promise<NativeConnection> {
  const { namespace: _namespace, ...connectionOptions } = await connectionSettings(parsedEnv(env));
  const { NativeConnection } = await loadWorkerSdk('a worker connection');
  return NativeConnection.connect(connectionOptions);
}
