/**
 * A server a test runs for a while (Prometheus, Jaeger): started from a folder of its own that holds its
 * configuration, ready once `readyUrl` answers 2xx, stopped with its folder removed. When it does not become
 * ready, the error carries the last lines of its output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { OutputTail } from '../../src/temporal/output-tail.js';
import { waitFor } from './wait-for.js';

export interface ToolOptions {
  binary: string;
  args: string[];
  /** The temporary folder holding its configuration and data, removed when it stops. */
  dir: string;
  readyUrl: string;
  /** What is waited for, in the error message: e.g. `Jaeger ready on http://…`. */
  what: string;
  env?: NodeJS.ProcessEnv;
}

/** Resolves with the function that stops the server once it is ready. */
export async function startTool({ binary, args, dir, readyUrl, what, env }: ToolOptions): Promise<() => Promise<void>> {
  const tail = new OutputTail(30);
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
  tail.follow(child.stdout);
  tail.follow(child.stderr);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', (error) => tail.push(`could not start ${binary}: ${error.message}`));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => (await fetch(readyUrl)).ok, what, { timeoutMs: 60_000 });
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}; its output:\n${tail}`, { cause: error });
  }
  return stop;
}
