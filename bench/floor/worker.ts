/**
 * The floor's worker, a process of its own like `msgflow worker`: `floorRoundTrip` on the queue given as the
 * first argument, its no-op activity on the sibling queue. Reads TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE.
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { floorActivityQueue } from './workflow.js';

const taskQueue = process.argv[2];
if (!taskQueue) throw new Error('usage: worker.ts TASK_QUEUE');
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
const activities = { echo: async (value: string) => value };
const workers = await Promise.all([
  Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./workflow.ts', import.meta.url)),
    activities,
  }),
  Worker.create({ connection, namespace, taskQueue: floorActivityQueue(taskQueue), activities }),
]);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => workers.forEach((worker) => worker.shutdown()));
console.log('floor worker running');
await Promise.all(workers.map((worker) => worker.run()));
await connection.close();
