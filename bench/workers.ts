/**
 * Several msgflow workers in the benchmark's process, each on a connection of its own, as separate deployments
 * would run: they share the stack's message store and the provider's token, and each calls the sandbox with a
 * client of its own (no client-side retry, as `msgflow worker` does), whose requests `fetch` may count.
 */
import { NativeConnection } from '@temporalio/worker';
import { MessagingClient } from '../src/client/index.js';
import type { RunningStack } from '../src/stack.js';
import {
  bundleMsgflowWorkflows,
  createMsgflowWorker,
  type MsgflowWorker,
  type MsgflowWorkerOptions,
} from '../src/worker.js';
import type { BenchContext } from './harness.js';

/** What differs between benchmarks: each worker's own options beside the shared ones. */
type OwnOptions = Omit<MsgflowWorkerOptions, 'connection' | 'namespace' | 'taskQueue' | 'messaging' | 'store'>;

export interface BenchWorkers {
  /** Shuts every worker down and closes their connections. */
  close(): Promise<void>;
}

export async function startBenchWorkers(
  { temporal }: Pick<BenchContext, 'temporal'>,
  stack: RunningStack,
  {
    count,
    taskQueue,
    fetch,
    options,
  }: { count: number; taskQueue: string; fetch: typeof globalThis.fetch; options: () => OwnOptions },
): Promise<BenchWorkers> {
  const workflowBundle = await bundleMsgflowWorkflows();
  const connections: NativeConnection[] = [];
  const workers: MsgflowWorker[] = [];
  const runs: Promise<void>[] = [];
  const close = async () => {
    for (const worker of workers) worker.shutdown();
    await Promise.allSettled(runs);
    for (const connection of connections) await connection.close();
  };
  try {
    for (let i = 0; i < count; i++) {
      const connection = await NativeConnection.connect({ address: temporal.address });
      connections.push(connection);
      const worker = await createMsgflowWorker({
        connection,
        namespace: temporal.namespace,
        taskQueue,
        messaging: new MessagingClient({ baseUrl: stack.sandbox.baseUrl, token: stack.token, maxRetries: 0, fetch }),
        store: stack.store,
        workflowBundle,
        ...options(),
      });
      workers.push(worker);
      runs.push(worker.run());
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { close };
}
