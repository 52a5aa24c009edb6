/**
 * The whole stack for end-to-end tests: the real sandbox over HTTP, the real ingress, a real worker, all
 * against the test run's shared Temporal dev server, on a task queue of their own.
 */
import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime, type WorkflowBundle } from '@temporalio/worker';
import { inject } from 'vitest';
import { type RunningStack, type StackOptions, startStack } from '../../src/stack.js';
import { bundleMsgflowWorkflows } from '../../src/worker.js';
import { FAST_TIMINGS } from './sandbox.js';

// The SDK's INFO lines (worker state changes) would drown the test report.
Runtime.install({ logger: new DefaultLogger('WARN') });

let bundle: Promise<WorkflowBundle> | undefined;

/** The workflow bundle, built once per test file (webpack takes a few seconds). */
export function testWorkflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleMsgflowWorkflows();
  return bundle;
}

export async function startTestStack(
  overrides: Partial<Omit<StackOptions, 'sandbox'>> & { sandbox?: StackOptions['sandbox'] } = {},
): Promise<RunningStack> {
  const { sandbox, ...rest } = overrides;
  return startStack({
    temporal: inject('temporal'),
    taskQueue: `e2e-${randomUUID()}`,
    workflowBundle: await testWorkflowBundle(),
    ratePerMinute: 60_000,
    initialBalance: 1_000_000,
    ...rest,
    sandbox: {
      port: 0,
      db: ':memory:',
      log: () => {},
      ...FAST_TIMINGS,
      ...sandbox,
      carrier: { ...FAST_TIMINGS.carrier, ...sandbox?.carrier },
      webhooks: { ...FAST_TIMINGS.webhooks, ...sandbox?.webhooks },
    },
  });
}
