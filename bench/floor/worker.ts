/**
 * The floor's worker, a process of its own like `msgflow worker`: `floorRoundTrip` on the queue given as the
 * first argument, its no-op activity on the sibling queue, and the empty Nexus service (the Nexus path's floor) on
 * a queue of its own. Connects as msgflow's worker does (TEMPORAL_ADDRESS, …).
 */
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { connectWorkerConnection } from '../../src/temporal/worker-connection.js';
import { emptyServiceHandler, floorNexusQueue } from '../nexus/empty-service.js';
import { floorActivityQueue } from './workflow.js';

const taskQueue = process.argv[2];
if (!taskQueue) throw new Error('usage: worker.ts TASK_QUEUE');
const { connection, namespace } = await connectWorkerConnection(process.env);
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
  Worker.create({ connection, namespace, taskQueue: floorNexusQueue(taskQueue), nexusServices: [emptyServiceHandler] }),
]);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => workers.forEach((worker) => worker.shutdown()));
console.log('floor worker running');
await Promise.all(workers.map((worker) => worker.run()));
await connection.close();
