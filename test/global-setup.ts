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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const echo = process.env.MSGFLOW_TEMPORAL_LOG
    ? (line: string) => process.stderr.write(`[temporal] ${line}\n`)
    : undefined;
  const server = await ensureTemporal(process.env, echo ? { log: echo } : {});
  project.provide('temporal', { address: server.address, namespace: server.namespace });
  return () => server.stop();
}
