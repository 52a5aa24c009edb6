/**
 * How a worker paces the provider queue on a real Temporal server: it declares the rate `providerQueueRate`
 * gives for the partitions the server keeps for that queue (the server reports the rate it then enforces),
 * and warns, naming the fix, when there are several: the server splits a queue's rate across its partitions.
 */
import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { MessagingClient } from '../../src/client/index.js';
import { providerQueueRate, providerTaskQueue } from '../../src/definitions/task-queues.js';
import type { Logger } from '../../src/log.js';
import { type MessageStore, openMessageStore } from '../../src/store/index.js';
import { type DevServer, startDevServer } from '../../src/temporal/dev-server.js';
import { createMsgflowWorker } from '../../src/worker.js';
import { testWorkflowBundle } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const LIMIT_PER_MINUTE = 120;
const RATE_LIMIT_SOURCE_WORKER = 2;
const TASK_QUEUE_TYPE_ACTIVITY = 2;

/** Runs a worker against `temporal` until the provider queue reports its rate; returns it and the warnings. */
async function pacingOf(
  temporal: { address: string; namespace: string },
  store: MessageStore,
): Promise<{ perSecond: number; warnings: string[] }> {
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} };
  const taskQueue = `pacing-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: temporal.address });
  const client = await Connection.connect({ address: temporal.address });
  const worker = await createMsgflowWorker({
    connection,
    namespace: temporal.namespace,
    taskQueue,
    messaging: new MessagingClient({ baseUrl: 'http://127.0.0.1:9/v1', token: 'unused', maxRetries: 0 }),
    store,
    providerRatePerMinute: LIMIT_PER_MINUTE,
    workflowBundle: await testWorkflowBundle(),
    logger,
  });
  const run = worker.run();
  try {
    // The server learns the rate from the worker's polls.
    const perSecond = await waitFor(
      async () => {
        const described = await client.workflowService.describeTaskQueue({
          namespace: temporal.namespace,
          taskQueue: { name: providerTaskQueue(taskQueue) },
          taskQueueType: TASK_QUEUE_TYPE_ACTIVITY,
          reportConfig: true,
        });
        const limit = described.effectiveRateLimit;
        return limit?.rateLimitSource === RATE_LIMIT_SOURCE_WORKER ? (limit.requestsPerSecond ?? undefined) : undefined;
      },
      'the provider queue to report its rate',
      { timeoutMs: 30_000 },
    );
    return { perSecond, warnings };
  } finally {
    worker.shutdown();
    await run;
    await connection.close();
    await client.close();
  }
}

describe('provider queue pacing', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function store(): Promise<MessageStore> {
    const opened = await openMessageStore({ file: ':memory:' });
    cleanups.push(() => opened.close());
    return opened;
  }

  it('declares the limit less the burst on a one-partition queue, and says nothing', { timeout: 120_000 }, async () => {
    const { perSecond, warnings } = await pacingOf(inject('temporal'), await store());
    expect(perSecond).toBeCloseTo(providerQueueRate(LIMIT_PER_MINUTE), 3);
    expect(perSecond * 60).toBeCloseTo(117, 0);
    expect(warnings).toEqual([]);
  });

  it('warns and leaves room for every burst when the server keeps 4 partitions', { timeout: 180_000 }, async () => {
    const server: DevServer = await startDevServer({
      dynamicConfig: { 'matching.numTaskqueueReadPartitions': 4, 'matching.numTaskqueueWritePartitions': 4 },
    });
    cleanups.push(() => server.stop());
    const { perSecond, warnings } = await pacingOf(server, await store());
    expect(perSecond).toBeCloseTo(providerQueueRate(LIMIT_PER_MINUTE, 4), 3);
    expect(perSecond).toBeLessThan(providerQueueRate(LIMIT_PER_MINUTE));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/provider queue has 4 partitions.*matching\.numTaskqueueReadPartitions/);
  });
});
