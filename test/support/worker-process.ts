/**
 * A msgflow worker (`msgflow worker`) or ingress (`msgflow ingress`) in a child process, so a test can kill it
 * like a crash would. It opens the stack's message store (a file: see startTestStack).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inject } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { childStoreEnv, TEST_AUDIENCE_ENV } from './stack.js';

export interface WorkerProcess {
  child: ChildProcess;
  /** SIGKILL: no shutdown, no activity completion reported — a crash. */
  kill(): Promise<void>;
  output(): string;
}

/** `root`: the checkout whose code the worker runs (another build's, in the deploy test); default this one. */
export function startWorkerProcess(
  stack: RunningStack,
  env: Record<string, string> = {},
  { root = '.' }: { root?: string } = {},
): WorkerProcess {
  return startMsgflowProcess('worker', stack, env, root);
}

/**
 * `msgflow ingress` in a child process on `port`, verifying with the stack's webhook secret and sharing its
 * store; its relay tells the workflows. `env` overrides (e.g. TEMPORAL_ADDRESS through a proxy).
 */
export function startIngressProcess(
  stack: RunningStack,
  port: number,
  env: Record<string, string> = {},
): WorkerProcess & { url: string } {
  const child = startMsgflowProcess('ingress', stack, {
    MSGFLOW_WEBHOOK_SECRETS: stack.webhookSecret,
    MSGFLOW_INGRESS_HOST: '127.0.0.1',
    MSGFLOW_INGRESS_PORT: String(port),
    ...env,
  });
  return { ...child, url: `http://127.0.0.1:${port}` };
}

/** A `msgflow <command>` child process on the stack's Temporal namespace, task queue, provider and store. */
export function startMsgflowProcess(
  command: 'worker' | 'ingress',
  stack: RunningStack,
  env: Record<string, string> = {},
  root = '.',
): WorkerProcess {
  const temporal = inject('temporal');
  let output = '';
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  // Run outside the checkout: a local `msgflow dev`'s .data/dev.env (its encryption key, …) must not leak in.
  const child = spawn(process.execPath, ['--import', tsx, resolve(root, 'src/cli/main.ts'), command], {
    cwd: tmpdir(),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      MSGFLOW_TASK_QUEUE: stack.taskQueue,
      // The stack's own worker deployment (testVersioning); the first worker of the build makes it current.
      MSGFLOW_DEPLOYMENT_NAME: stack.taskQueue,
      MSGFLOW_API_BASE_URL: stack.sandbox.baseUrl,
      MSGFLOW_API_TOKEN: stack.token,
      MSGFLOW_RATE_LIMIT_PER_MINUTE: '60000',
      MSGFLOW_LOG_LEVEL: 'warn',
      ...childStoreEnv(stack),
      ...TEST_AUDIENCE_ENV,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  return {
    child,
    output: () => output,
    kill: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
