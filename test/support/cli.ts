/**
 * Runs the `msgflow` command as a user would: a child process from the source, in a folder of the test's,
 * with this process's environment minus msgflow's and Temporal's own settings (a test passes the ones it means).
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';

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
