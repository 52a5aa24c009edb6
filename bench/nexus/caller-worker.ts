/**
 * The caller team's worker, a process of its own: `callNexusOperation` on the queue given as the first argument,
 * in the namespace TEMPORAL_NAMESPACE names, with Temporal's default data converter (no msgflow key).
 */
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { connectWorkerConnection } from '../../src/temporal/worker-connection.js';

const taskQueue = process.argv[2];
if (!taskQueue) throw new Error('usage: caller-worker.ts TASK_QUEUE');
const { connection, namespace } = await connectWorkerConnection(process.env);
const worker = await Worker.create({
  connection,
  namespace,
  taskQueue,
  workflowsPath: fileURLToPath(new URL('./caller-workflow.ts', import.meta.url)),
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => worker.shutdown());
console.log('caller worker running');
await worker.run();
await connection.close();
