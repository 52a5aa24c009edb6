/**
 * The whole stack for end-to-end tests: the real sandbox over HTTP, the real ingress, a real worker, all
 * against the test run's shared Temporal dev server, on a task queue of their own.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowBundle } from '@temporalio/worker';
import { inject } from 'vitest';
import { type RunningStack, type StackOptions, startStack } from '../../src/stack.js';
import { bundleMsgflowWorkflows } from '../../src/temporal/worker.js';

/** Fast carrier and webhook timings, so a message reaches its final state in well under a second. */
export const FAST_SANDBOX = {
  port: 0,
  db: ':memory:',
  log: () => {},
  tickMs: 20,
  sendLatencyMs: 0,
  carrier: { submitMs: 20, finalMs: 60, voiceStepMs: 30 },
  webhooks: { retryScheduleMs: [200, 400, 800, 1600, 3200, 6400], timeoutMs: 5000 },
};

let bundle: Promise<WorkflowBundle> | undefined;

/** The workflow bundle, built once per test file (webpack takes a few seconds). */
export function testWorkflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleMsgflowWorkflows();
  return bundle;
}

export async function startTestStack(overrides: Partial<Omit<StackOptions, 'sandbox'>> & { sandbox?: StackOptions['sandbox'] } = {}): Promise<RunningStack> {
  const { sandbox, ...rest } = overrides;
  return startStack({
    temporal: inject('temporal'),
    taskQueue: `e2e-${randomUUID()}`,
    workflowBundle: await testWorkflowBundle(),
    ratePerMinute: 60_000,
    initialBalance: 1_000_000,
    ...rest,
    sandbox: { ...FAST_SANDBOX, ...sandbox, webhooks: { ...FAST_SANDBOX.webhooks, ...sandbox?.webhooks } },
  });
}
