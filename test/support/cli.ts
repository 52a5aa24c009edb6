/**
 * Runs the `msgflow` command as a user would: a child process from the source, in a folder of the test's,
 * with this process's environment minus msgflow's and Temporal's own settings (a test passes the ones it means).
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { inject } from 'vitest';
import type { RunningStack } from '../../src/stack.js';

const root = resolve(import.meta.dirname, '../..');
const tsx = join(root, 'node_modules/.bin/tsx');
const main = join(root, 'src/cli/main.ts');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runMsgflow(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('MSGFLOW_') && !k.startsWith('TEMPORAL_')),
  );
  return new Promise((done) => {
    execFile(
      tsx,
      [main, ...args],
      { cwd: options.cwd, env: { ...inherited, ...options.env } },
      (error, stdout, stderr) => {
        done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The settings that point the command at a test stack: the run's Temporal and the stack's task queue. */
export function cliEnvFor(stack: RunningStack): Record<string, string> {
  const temporal = inject('temporal');
  return {
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    MSGFLOW_TASK_QUEUE: stack.taskQueue,
  };
}
