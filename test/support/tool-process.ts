/**
 * A server a test runs for a while (Prometheus, Jaeger): started from a folder of its own that holds its
 * configuration, ready once `readyUrl` answers 2xx, stopped with its folder removed. When it does not become
 * ready, the error carries the last lines of its output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { OutputTail } from '../../src/temporal/output-tail.js';

const READY_TIMEOUT_MS = 60_000;

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

/**
 * Resolves with the function that stops the server once it is ready. One that cannot be started, or ends before
 * it is ready, fails at once (not after the readiness timeout) naming the binary and what happened.
 */
export async function startTool({ binary, args, dir, readyUrl, what, env }: ToolOptions): Promise<() => Promise<void>> {
  const tail = new OutputTail(30);
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
  tail.follow(child.stdout);
  tail.follow(child.stderr);
  // 'close' comes after a spawn error too (with no 'exit'); `ended` says how it went.
  let ended: string | undefined;
  child.once('error', (error) => (ended = `could not be started (${error.message})`));
  const closed = new Promise<void>((resolve) =>
    child.once('close', (code, signal) => {
      ended ??= `exited with ${signal ?? `code ${code}`}`;
      resolve();
    }),
  );
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await closed;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const ready = async () => (await fetch(readyUrl)).ok;
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await ready().catch(() => false))) {
      if (ended !== undefined)
        throw new Error(`${binary} ${ended} before ${what}. Likely fix: ${fixFor(ended, binary)}`);
      if (Date.now() > deadline) throw new Error(`timed out after ${READY_TIMEOUT_MS} ms waiting for ${what}`);
      await Promise.race([closed, sleep(100)]);
    }
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}; its output:\n${tail}`, { cause: error });
  }
  return stop;
}

function fixFor(ended: string, binary: string): string {
  return ended.startsWith('could not be started')
    ? `make sure ${binary} exists and this user may run it`
    : 'its output (below) says why; a port in use: run again (the ports are picked free at the start)';
}
