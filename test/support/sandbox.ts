/**
 * Starts a real sandbox for a test suite: in-memory SQLite, an ephemeral port on 127.0.0.1, and fast
 * timings (carrier moves in tens of ms, webhook retries in tens to hundreds of ms). Pass `db` for a file,
 * and any other option to override. The per-IP OTP limit is raised to 1000/min here because every test
 * request comes from 127.0.0.1; tests of that limit set `otpPerIpPerMinute` themselves.
 */
import type { Scope } from '../../src/api/scopes.js';
import { SCOPES } from '../../src/api/scopes.js';
import { type RunningSandbox, SandboxAdmin, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

export const FAST_TIMINGS = {
  tickMs: 10,
  sendLatencyMs: 5,
  carrier: { submitMs: 20, finalMs: 30, voiceStepMs: 20 },
  webhooks: { retryScheduleMs: [50, 100, 200, 400], timeoutMs: 2000, batchMax: 100, concurrency: 16 },
} satisfies SandboxOptions;

export interface TestAccount {
  accountId: string;
  token: string;
  tokenId: string;
}

export interface TestSandbox {
  sandbox: RunningSandbox;
  admin: SandboxAdmin;
  /** A fresh account with `balance` (default 1_000_000), approved sender 'ACME', and a token with the given scopes (default all). */
  newAccount(input?: {
    balance?: number;
    scopes?: Scope[];
    senders?: string[];
    ratePerMinute?: number;
  }): Promise<TestAccount>;
  close(): Promise<void>;
}

export async function startTestSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  const sandbox = await startSandbox({
    port,
    host,
    db: ':memory:',
    otpPerIpPerMinute: 1000,
    log: () => {},
    ...FAST_TIMINGS,
    ...options,
    carrier: { ...FAST_TIMINGS.carrier, ...options.carrier },
    webhooks: { ...FAST_TIMINGS.webhooks, ...options.webhooks },
  }).catch((error: unknown) => {
    throw new Error(startFailure(error as NodeJS.ErrnoException, host, port), { cause: error });
  });
  const admin = new SandboxAdmin({ url: sandbox.url, adminToken: sandbox.adminToken });
  let counter = 0;
  return {
    sandbox,
    admin,
    async newAccount(input = {}) {
      counter += 1;
      const account = await admin.createAccount({
        name: `test account ${counter}`,
        balance: input.balance ?? 1_000_000,
      });
      for (const sender of input.senders ?? ['ACME']) await admin.addSender(account.id, sender);
      if (input.ratePerMinute !== undefined) await admin.setRateLimit(account.id, input.ratePerMinute);
      const created = await admin.createToken(account.id, { scopes: input.scopes ?? [...SCOPES], name: 'test' });
      return { accountId: account.id, token: created.token, tokenId: created.id };
    },
    close: () => sandbox.close(),
  };
}

/** One message for a sandbox that did not start: where it was to listen, why, and the likely fix. */
function startFailure(error: NodeJS.ErrnoException, host: string, port: number): string {
  if (error.syscall !== 'listen') return `The test sandbox could not start: ${error.message}`;
  const fix =
    error.code === 'EADDRINUSE'
      ? 'the port is in use: stop what holds it, or let the test take a free port (port 0)'
      : `check that this process may listen on ${host}`;
  return `The test sandbox could not listen on ${host}:${port} (${error.code}). Likely fix: ${fix}.`;
}
