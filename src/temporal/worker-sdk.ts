/**
 * The Temporal worker SDK (its native bridge, the workflow bundler), an optional peer of msgflow: loaded on
 * first use, so code that never runs a worker does without it. Kept apart from connection.ts, whose types
 * the light `msgflow` entry point publishes.
 */
import type * as WorkerSdk from '@temporalio/worker';
import { importOptional } from '../optional-packages.js';

export function loadWorkerSdk(purpose = 'the msgflow worker'): Promise<typeof WorkerSdk> {
  return importOptional('@temporalio/worker', purpose, () => import('@temporalio/worker'));
}
