/**
 * The whole stack for end-to-end tests: the real sandbox over HTTP, the real ingress, a real worker, all
 * against the test run's shared Temporal dev server, on a task queue of their own. A stack whose workers
 * run elsewhere (`startWorker: false`) keeps its message store in a SQLite file of its own, which worker
 * processes open too (`childStoreEnv`): the ingress and the workers must share one store.
 */
import { NO_OTP_GUARD } from '../../src/api/otp-guard.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, type WorkflowBundle } from '@temporalio/worker';
import { inject } from 'vitest';
import { type RunningStack, type StackOptions, startStack } from '../../src/stack.js';
import { MessagingClient } from '../../src/client/index.js';
import { bundleMsgflowWorkflows, createMsgflowWorker, type MsgflowWorkerOptions } from '../../src/worker.js';
import { keyRingOf } from '../../src/temporal/data-converter.js';
import { workflowBuildId } from '../../src/temporal/build-id.js';
import type { WorkerVersioning } from '../../src/temporal/worker-deployment.js';
import type { MessageStore, MessageStoreOptions } from '../../src/store/index.js';
import { FAST_TIMINGS } from './sandbox.js';

// The SDK's INFO lines (worker state changes) would drown the test report.
Runtime.install({ logger: new DefaultLogger('WARN') });

/**
 * Tests write their audience files under the system's temporary folder and serve URL audiences on loopback
 * over http: their workers are allowed those (a deployment's default allows neither).
 */
export const TEST_AUDIENCE_ACCESS = {
  folders: [tmpdir()],
  urlHosts: ['127.0.0.1', 'localhost'],
  allowHttp: true,
  allowInternalAddresses: true,
};

/** TEST_AUDIENCE_ACCESS for a `msgflow worker` process. */
export const TEST_AUDIENCE_ENV = {
  MSGFLOW_AUDIENCE_DIRS: tmpdir(),
  MSGFLOW_AUDIENCE_URL_HOSTS: '127.0.0.1,localhost',
  MSGFLOW_AUDIENCE_URL_ALLOW_HTTP: 'true',
  MSGFLOW_AUDIENCE_URL_ALLOW_INTERNAL: 'true',
};

/**
 * A test stack's workers join a worker deployment of their own (named after the stack's task queue, so tests
 * running side by side never move each other's current build) and make their build current on start, as
 * `msgflow dev` does.
 */
export function testVersioning(taskQueue: string): WorkerVersioning {
  return { deploymentName: taskQueue, buildId: workflowBuildId(), makeCurrent: 'always' };
}

const bundles = new Map<boolean, Promise<WorkflowBundle>>();

/**
 * The workflow bundle, built once per test file (webpack takes a few seconds): `versioned` for workers in a
 * worker deployment (the test stacks'), without for unversioned ones.
 */
export function testWorkflowBundle({ versioned = false }: { versioned?: boolean } = {}): Promise<WorkflowBundle> {
  if (!bundles.has(versioned)) bundles.set(versioned, bundleMsgflowWorkflows({ versioned }));
  return bundles.get(versioned)!;
}

export async function startTestStack(
  overrides: Partial<Omit<StackOptions, 'sandbox'>> & { sandbox?: StackOptions['sandbox'] } = {},
): Promise<RunningStack> {
  const { sandbox, ...rest } = overrides;
  const shared = rest.startWorker === false && !rest.store ? sharedStoreFile(rest.encryptionKey) : undefined;
  const taskQueue = rest.taskQueue ?? `e2e-${randomUUID()}`;
  const versioning = 'versioning' in rest ? rest.versioning : testVersioning(taskQueue);
  try {
    const stack = await startStack({
      temporal: inject('temporal'),
      taskQueue,
      versioning,
      workflowBundle: await testWorkflowBundle({ versioned: versioning !== undefined }),
      ratePerMinute: 60_000,
      initialBalance: 1_000_000,
      audienceAccess: TEST_AUDIENCE_ACCESS,
      // Suites about other OTP rules send many unverified codes to neighbouring numbers; the guard's own suites
      // (otp-guard) pass the rules they test.
      otpGuard: NO_OTP_GUARD,
      ...rest,
      ...(shared ? { store: shared.options } : {}),
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
    if (!shared) return stack;
    const running: RunningStack = {
      ...stack,
      close: async () => {
        await stack.close();
        shared.remove();
      },
    };
    childEnvs.set(running, shared.env);
    return running;
  } catch (error) {
    shared?.remove();
    throw error;
  }
}

const childEnvs = new WeakMap<RunningStack, Record<string, string>>();

/** The environment a worker process needs to open `stack`'s message store (empty for an in-memory store). */
export function childStoreEnv(stack: RunningStack): Record<string, string> {
  return childEnvs.get(stack) ?? {};
}

interface SharedStoreFile {
  options: MessageStoreOptions;
  env: Record<string, string>;
  remove(): void;
}

/** A store file in a fresh temporary directory; encrypted under `encryptionKey` with a lookup key to share. */
function sharedStoreFile(encryptionKey: string | undefined): SharedStoreFile {
  const dir = mkdtempSync(join(tmpdir(), 'msgflow-store-'));
  const file = join(dir, 'msgflow.db');
  const lookupKey = randomBytes(32);
  return {
    options: encryptionKey ? { file, encryption: { ring: keyRingOf(encryptionKey), lookupKey } } : { file },
    env: {
      MSGFLOW_STORE_FILE: file,
      ...(encryptionKey ? { MSGFLOW_STORE_LOOKUP_KEY: lookupKey.toString('base64') } : {}),
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TestWorker {
  stop(): Promise<void>;
}

/**
 * A worker of the test's own for `stack` (started with `startWorker: false`), as the stack would run it but
 * over `store` (e.g. the stack's, wrapped to delay or record calls) and, if given, on another task queue.
 */
export async function startTestWorker(
  stack: RunningStack,
  options: { store: MessageStore; taskQueue?: string } & Partial<Omit<MsgflowWorkerOptions, 'connection'>>,
): Promise<TestWorker> {
  const { address, namespace } = inject('temporal');
  const connection = await NativeConnection.connect({ address });
  const versioning = 'versioning' in options ? options.versioning : testVersioning(stack.taskQueue);
  const worker = await createMsgflowWorker({
    connection,
    namespace,
    taskQueue: stack.taskQueue,
    messaging: new MessagingClient({ baseUrl: stack.sandbox.baseUrl, token: stack.token, maxRetries: 0 }),
    providerRatePerMinute: 60_000,
    workflowBundle: await testWorkflowBundle({ versioned: versioning !== undefined }),
    ...options,
    versioning,
  });
  const running = worker.run();
  await worker.routed.catch(async (error: unknown) => {
    await running.catch(() => undefined);
    await connection.close();
    throw error;
  });
  return {
    async stop() {
      worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    },
  };
}
