/**
 * One Temporal server for the whole test run (vitest `globalSetup`): the one at TEMPORAL_ADDRESS if set,
 * otherwise a dev server started here and stopped after the run. Tests read `inject('temporal')` and
 * isolate themselves by task queue. MSGFLOW_TEMPORAL_LOG=1 echoes the server's output.
 */
import type { TestProject } from 'vitest/node';
import { ensureTemporal } from '../src/temporal/dev-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporal: { address: string; namespace: string };
  }
}

/**
 * Every test stack's workers join a worker deployment of their own (test/support/stack.ts), and a run starts
 * hundreds: more than the server's default of 100 per namespace. A server at TEMPORAL_ADDRESS needs the same.
 */
export const TEST_SERVER_DYNAMIC_CONFIG = { 'matching.maxDeployments': 100_000 };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const echo = process.env.MSGFLOW_TEMPORAL_LOG
    ? (line: string) => process.stderr.write(`[temporal] ${line}\n`)
    : undefined;
  const server = await ensureTemporal(process.env, {
    ...(echo ? { log: echo } : {}),
    dynamicConfig: TEST_SERVER_DYNAMIC_CONFIG,
  });
  project.provide('temporal', { address: server.address, namespace: server.namespace });
  return () => server.stop();
}
