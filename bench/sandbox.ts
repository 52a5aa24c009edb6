/**
 * Sandbox throughput: requests per second and latency of POST /sms/send (one recipient, a fresh
 * Idempotency-Key each, so every request is a real charged send) and GET /messages (a 50-item page),
 * beside a bare Express handler measured in the same run, in the same process, with the same HTTP
 * client and concurrency: the same JSON body parsed and a small JSON answer for the POST, a 50-item page
 * serialized for the GET. The sandbox stores in a SQLite file (as `msgflow sandbox` does) and its
 * carrier and webhook dispatcher tick at their default pace meanwhile.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { SCOPES } from '../src/api/scopes.js';
import { MAGIC_NUMBERS, SandboxAdmin, startSandbox } from '../src/sandbox/index.js';
import { type Benchmark, type BenchRow, round } from './harness.js';
import { assertClean, beforeAndAfter, latencyColumns, type LoadResult, runLoad, sizeFromEnv } from './load.js';

const REQUESTS = sizeFromEnv('MSGFLOW_BENCH_SANDBOX_REQUESTS', 2000);
const CONCURRENCY = sizeFromEnv('MSGFLOW_BENCH_CONCURRENCY', 32);

export const sandboxBenchmark: Benchmark = {
  name: 'sandbox',
  async run({ log }) {
    const dir = mkdtempSync(join(tmpdir(), 'msgflow-bench-sandbox-'));
    const sandbox = await startSandbox({ port: 0, db: join(dir, 'sandbox.db'), log: () => {} });
    const bare = await startBareServer();
    try {
      const admin = new SandboxAdmin({ url: sandbox.url, adminToken: sandbox.adminToken });
      const account = await admin.createAccount({ name: 'bench', balance: 1_000_000_000 });
      await admin.addSender(account.id, 'ACME');
      await admin.setRateLimit(account.id, 1_000_000);
      const { token } = await admin.createToken(account.id, { scopes: [...SCOPES] });

      const body = JSON.stringify({
        recipients: [MAGIC_NUMBERS.delivered],
        sender: 'ACME',
        message: 'Your order has shipped',
      });
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const expect = async (response: Response, status: number) => {
        const text = await response.text();
        if (response.status !== status) throw new Error(`answered ${response.status}: ${text.slice(0, 200)}`);
      };
      const send = (base: string) => async () =>
        expect(
          await fetch(`${base}/sms/send`, {
            method: 'POST',
            headers: { ...headers, 'idempotency-key': randomUUID() },
            body,
          }),
          202,
        );
      const list = (base: string) => async () => expect(await fetch(`${base}/messages?per_page=50`, { headers }), 200);

      // Warm-up, and enough messages that every list page is full.
      await runLoad(200, CONCURRENCY, send(sandbox.baseUrl));
      await runLoad(200, CONCURRENCY, send(bare.baseUrl));

      // Each sandbox case sits between two runs of its ceiling; the ceiling is their mean, so drift on a
      // busy machine weighs on both sides alike.
      const measure = async (name: string, operation: () => Promise<void>) => {
        log(`${name}: ${REQUESTS} requests`);
        const result = await runLoad(REQUESTS, CONCURRENCY, operation);
        assertClean(name, result);
        return result;
      };
      const bracketed = async (
        ceilingName: string,
        ceilingOp: () => Promise<void>,
        name: string,
        operation: () => Promise<void>,
      ) => {
        const before = await measure(`${ceilingName} (before)`, ceilingOp);
        const measured = await measure(name, operation);
        const after = await measure(`${ceilingName} (after)`, ceilingOp);
        return { ceiling: beforeAndAfter(before, after), measured };
      };
      const sends = await bracketed(
        'bare Express POST',
        send(bare.baseUrl),
        'sandbox POST /sms/send',
        send(sandbox.baseUrl),
      );
      const lists = await bracketed(
        'bare Express GET',
        list(bare.baseUrl),
        'sandbox GET /messages',
        list(sandbox.baseUrl),
      );

      const row = (name: string, result: LoadResult, ceiling: LoadResult): BenchRow => ({
        case: name,
        requests: result.operations,
        'req/s': round(result.perSecond),
        'vs bare': `${round((result.perSecond / ceiling.perSecond) * 100)}%`,
        ...latencyColumns(result),
      });
      return {
        title: `Sandbox: requests per second beside a bare Express handler (${REQUESTS} requests per case, concurrency ${CONCURRENCY})`,
        rows: [
          row(
            'ceiling: bare Express POST (parse JSON, answer 202; mean of before/after)',
            sends.ceiling,
            sends.ceiling,
          ),
          row('sandbox POST /sms/send (1 recipient)', sends.measured, sends.ceiling),
          row('ceiling: bare Express GET (a 50-item page; mean of before/after)', lists.ceiling, lists.ceiling),
          row('sandbox GET /messages?per_page=50', lists.measured, lists.ceiling),
        ],
        notes: [
          'send: auth, rate limit, validation, idempotency key, balance, one message row and its carrier schedule, all in SQLite (file, WAL)',
          `the sandbox's send latency setting (default 10 ms, the time a key is held) is part of every send`,
          'load generator and servers share one process and this machine; MSGFLOW_BENCH_SANDBOX_REQUESTS / MSGFLOW_BENCH_CONCURRENCY size the run',
        ],
      };
    } finally {
      await bare.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** The ceiling: Express with a JSON body parser and handlers that do no work beyond answering. */
async function startBareServer(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const app = express();
  app.disable('x-powered-by');
  const page = {
    data: Array.from({ length: 50 }, (_, i) => ({
      id: `msg_${i}`,
      kind: 'sms',
      campaign_id: 'cmp_bare',
      mobile_number: '+12025550100',
      sender: 'ACME',
      message: 'Your order has shipped',
      status: 'delivered',
      segments: 1,
      cost: 3,
      currency: 'USD',
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    })),
    next_cursor: 'opaque',
    per_page: 50,
  };
  app.post('/v1/sms/send', express.json(), (req, res) => {
    res.status(202).json({
      data: { campaign_id: 'cmp_bare', recipients: (req.body as { recipients?: unknown[] }).recipients?.length ?? 0 },
    });
  });
  app.get('/v1/messages', (_req, res) => {
    res.json(page);
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
