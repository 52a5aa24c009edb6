/**
 * The caller's side of the OTP benchmark's Nexus path: a namespace of its own, an endpoint to msgflow's queue
 * and one to the empty service's (the floor), and the caller's worker in a process of its own. Each call is one
 * run of the caller's workflow (`callNexusOperation`), timed from the caller's client: start to result.
 */
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { addNexusEndpoint, ensureNamespace } from '../../src/temporal/nexus-endpoints.js';
import { type ServiceProcess, startService } from '../processes.js';
import type { callNexusOperation, NexusCall } from './caller-workflow.js';

const CALLER_WORKER = fileURLToPath(new URL('./caller-worker.ts', import.meta.url));
/** How long a new namespace may take to reach the server's caches before its worker is accepted. */
const NAMESPACE_READY_MS = 60_000;

export interface NexusTarget {
  namespace: string;
  taskQueue: string;
}

export interface BenchCallers {
  /** The caller namespace's client (Temporal's default converter): it reads the caller workflows' histories. */
  client: Client;
  /** The endpoints' names: to msgflow's service, and to the empty one. */
  endpoints: { msgflow: string; empty: string };
  /** Runs the caller's workflow for one operation: its id and result. */
  call(call: NexusCall): Promise<{ workflowId: string; result: unknown }>;
  close(): Promise<void>;
}

export async function startBenchCallers(
  address: string,
  targets: { msgflow: NexusTarget; empty: NexusTarget },
): Promise<BenchCallers> {
  const id = randomUUID().slice(0, 8);
  const namespace = `bench-callers-${id}`;
  const taskQueue = `bench-caller-${id}`;
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const connection = await Connection.connect({ address });
    cleanups.push(() => connection.close());
    await ensureNamespace(connection, namespace);
    const endpoints = { msgflow: `bench-msgflow-${id}`, empty: `bench-empty-${id}` };
    for (const which of ['msgflow', 'empty'] as const) {
      cleanups.push(await addNexusEndpoint(connection, { name: endpoints[which], ...targets[which] }));
    }
    const worker = await startCallerWorker(address, namespace, taskQueue);
    cleanups.push(() => worker.stop());
    const client = new Client({ connection, namespace });
    return {
      client,
      endpoints,
      async call(call) {
        const workflowId = `bench-caller-${randomUUID()}`;
        const result = await client.workflow.execute<typeof callNexusOperation>('callNexusOperation', {
          workflowId,
          taskQueue,
          args: [call],
        });
        return { workflowId, result };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The caller's worker; a new namespace is refused for a few seconds, so a worker that exits is started again. */
async function startCallerWorker(address: string, namespace: string, taskQueue: string): Promise<ServiceProcess> {
  const deadline = Date.now() + NAMESPACE_READY_MS;
  for (;;) {
    try {
      return await startService('caller-worker', CALLER_WORKER, [taskQueue], {
        cwd: tmpdir(),
        env: { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace },
        ready: /caller worker running/,
      });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}
