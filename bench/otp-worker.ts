/**
 * A stack for the OTP benchmarks with its worker in a process of its own (`msgflow worker`), as deployed:
 * the sandbox, the ingress and the facade's Temporal client stay in this process; the worker opens the same
 * SQLite store file and the same OTP keys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningStack, type StackOptions, startStack } from '../src/stack.js';
import { generateOtpKeys } from '../src/crypto/otp-keys.js';
import type { BenchContext } from './harness.js';
import { MSGFLOW_CLI, type ServiceProcess, startService } from './processes.js';

export interface OtpBenchStack {
  stack: RunningStack;
  worker: ServiceProcess;
  close(): Promise<void>;
}

export async function startOtpBenchStack(
  { temporal }: BenchContext,
  options: Omit<StackOptions, 'temporal' | 'startWorker' | 'store' | 'otpKeys'>,
  workerEnv: Record<string, string> = {},
): Promise<OtpBenchStack> {
  const dir = mkdtempSync(join(tmpdir(), 'msgflow-bench-otp-'));
  const file = join(dir, 'msgflow.db');
  const otp = generateOtpKeys();
  let stack: RunningStack | undefined;
  try {
    stack = await startStack({ ...options, temporal, startWorker: false, store: { file }, otpKeys: otp.keys });
    const worker = await startService('worker', MSGFLOW_CLI, ['worker'], {
      cwd: dir,
      env: {
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: temporal.namespace,
        MSGFLOW_STORE_FILE: file,
        MSGFLOW_LOG_LEVEL: 'info',
        MSGFLOW_TASK_QUEUE: options.taskQueue,
        MSGFLOW_API_BASE_URL: stack.sandbox.baseUrl,
        MSGFLOW_API_TOKEN: stack.token,
        MSGFLOW_RATE_LIMIT_PER_MINUTE: String(options.ratePerMinute ?? 120),
        ...otp.env,
        ...workerEnv,
      },
      ready: /worker running/,
      readyTimeoutMs: 300_000,
    });
    const running = stack;
    return {
      stack: running,
      worker,
      close: async () => {
        await worker.stop();
        await running.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
