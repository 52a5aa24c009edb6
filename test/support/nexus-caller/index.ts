/**
 * The caller's side for Nexus tests: a namespace of its own, an endpoint routing to a msgflow stack's queue,
 * and a worker running the caller workflow with Temporal's default converter (no msgflow key anywhere).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { OperationKey } from 'nexus-rpc';
import { inject } from 'vitest';
import type { MsgflowNexusService } from '../../../src/api/nexus-service.js';
import { addNexusEndpoint, ensureNamespace } from '../../../src/temporal/nexus-endpoints.js';
import { tracingClientInterceptors } from '../../../src/tracing/setup.js';
import { WORKFLOW_INTERCEPTOR_MODULES, workerTracing } from '../../../src/tracing/worker.js';
import { waitFor } from '../wait-for.js';
import type { callMsgflow, MsgflowCall } from './workflows.js';

const WORKFLOWS_PATH = fileURLToPath(new URL('./workflows.ts', import.meta.url));

export interface NexusCaller {
  namespace: string;
  endpoint: string;
  /** The queue the caller's worker runs `callMsgflow` on. */
  taskQueue: string;
  /** The caller's client: Temporal's default data converter, no codec. */
  client: Client;
  /** Calls through `endpoint` (default: the one made for `target`'s queue). */
  call<K extends OperationKey<MsgflowNexusService['operations']>>(
    operation: K,
    input: MsgflowCall<K>['input'],
    options?: { endpoint?: string },
  ): Promise<{ workflowId: string; result: Awaited<ReturnType<typeof callMsgflow<K>>> }>;
  /** Another endpoint into the target's namespace, for `taskQueue` (a team's queue); its name. */
  addEndpoint(taskQueue: string): Promise<string>;
  /** Starts the caller's workflow for one operation without waiting: cancel it to cancel the operation. */
  start<K extends OperationKey<MsgflowNexusService['operations']>>(
    operation: K,
    input: MsgflowCall<K>['input'],
  ): Promise<WorkflowHandle<typeof callMsgflow<K>>>;
  close(): Promise<void>;
}

/**
 * A caller namespace and worker, and an endpoint named for this test that targets `target`'s task queue, on the
 * test run's dev server (or the one at `address`, for a script).
 */
export async function startNexusCaller(
  target: { namespace: string; taskQueue: string },
  { address = inject('temporal').address, traced = false }: { address?: string; traced?: boolean } = {},
): Promise<NexusCaller> {
  const id = randomUUID().slice(0, 8);
  const namespace = `callers-${id}`;
  const endpoint = `msgflow-${id}`;
  const taskQueue = `caller-${id}`;
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const connection = await Connection.connect({ address });
    cleanups.push(() => connection.close());
    await ensureNamespace(connection, namespace);
    await waitFor(() => connection.workflowService.describeNamespace({ namespace }), `namespace ${namespace}`);
    const createEndpoint = async (name: string, taskQueue: string) =>
      cleanups.push(await addNexusEndpoint(connection, { name, namespace: target.namespace, taskQueue }));
    await createEndpoint(endpoint, target.taskQueue);

    const workerConnection = await NativeConnection.connect({ address });
    cleanups.push(() => workerConnection.close());
    // A new namespace reaches the server's caches within seconds: the worker may be refused until then.
    const worker = await waitFor(
      () =>
        Worker.create({
          connection: workerConnection,
          namespace,
          taskQueue,
          workflowsPath: WORKFLOWS_PATH,
          // Traced: Temporal's OpenTelemetry interceptors, which carry the caller's span in the Nexus request.
          ...(traced
            ? { interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }, sinks: workerTracing()!.sinks }
            : {}),
        }),
      `a worker in ${namespace}`,
    );
    const running = worker.run();
    cleanups.push(async () => {
      worker.shutdown();
      await running;
    });

    const client = new Client({
      connection,
      namespace,
      ...(traced ? { interceptors: tracingClientInterceptors() } : {}),
    });
    return {
      namespace,
      endpoint,
      taskQueue,
      client,
      async call(operation, input, options = {}) {
        const workflowId = `caller-${operation}-${randomUUID()}`;
        const result = await client.workflow.execute('callMsgflow', {
          workflowId,
          taskQueue,
          args: [{ endpoint: options.endpoint ?? endpoint, operation, input }],
        });
        return { workflowId, result };
      },
      async addEndpoint(targetQueue) {
        const name = `${endpoint}-${randomUUID().slice(0, 8)}`;
        await createEndpoint(name, targetQueue);
        return name;
      },
      start(operation, input) {
        return client.workflow.start('callMsgflow', {
          workflowId: `caller-${operation}-${randomUUID()}`,
          taskQueue,
          args: [{ endpoint, operation, input }],
        }) as Promise<WorkflowHandle<typeof callMsgflow<typeof operation>>>;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
