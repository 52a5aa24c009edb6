/**
 * The outbox across crashes of real `msgflow ingress` processes on one store (the stack's own ingress runs no
 * relay here, so only those processes tell the workflows):
 * - an ingress answers `200` for every delivery while it cannot reach Temporal, so nothing is told, and is
 *   then `kill -9`ed: another ingress tells every outcome from the store, none lost;
 * - an ingress whose relay holds claims (its signals hang: Temporal stopped answering) is `kill -9`ed: once
 *   the claims' lease runs out another ingress takes those workflows over and tells them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { freePort } from '../../src/temporal/dev-server.js';
import { rawRows } from '../store/dialects.js';
import { childStoreEnv, startTestStack } from '../support/stack.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { postDelivered } from '../support/delivered-event.js';
import { waitFor } from '../support/wait-for.js';
import { startIngressProcess, startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { printSummary } from './support/summary.js';

const MESSAGES = Number(process.env.MSGFLOW_RELIABILITY_RELAY_MESSAGES ?? 30);
/** Only a signal can settle these waits: the window never ends during the run. */
const LONG_WAIT_MS = 60 * 60 * 1000;
const LEASE_SECONDS = 3;

describe('the relay across ingress crashes', () => {
  let stack: RunningStack;
  let proxy: TcpProxy;
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ startWorker: false, ingress: { relay: false } });
    processes.push(startWorkerProcess(stack));
    proxy = await startTcpProxy(inject('temporal').address);
  }, 120_000);
  afterAll(async () => {
    for (const p of processes) await p.kill();
    await proxy?.close();
    await stack?.close();
  });

  const storeFile = () => childStoreEnv(stack).MSGFLOW_STORE_FILE!;

  async function ingress(env: Record<string, string> = {}) {
    const started = startIngressProcess(stack, await freePort(), env);
    processes.push(started);
    await waitFor(
      async () => (await fetch(`${started.url}/readyz`).catch(() => undefined))?.status === 200,
      `the ingress process to be ready (${started.output()})`,
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    return started;
  }

  /** `count` awaitMessage workflows, each waiting in the store for a message of its own. */
  async function waiters(count: number) {
    const run = randomUUID().slice(0, 8);
    const ids = Array.from({ length: count }, (_, i) => `relay-${run}-${i}`);
    const started = await Promise.all(ids.map((id) => stack.msgflow.awaitMessage(id, { waitWindowMs: LONG_WAIT_MS })));
    await waitFor(
      async () => (await Promise.all(ids.map((id) => stack.store.message(id)))).every((m) => m?.waiters.length === 1),
      'every waiter registered',
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    return { ids, started };
  }

  async function deliver(url: string, ids: string[]): Promise<number[]> {
    const statuses: number[] = [];
    for (const id of ids) {
      const response = await postDelivered(`${url}/webhooks/messaging`, stack.webhookSecret, id);
      const body = (await response.json()) as { rejected?: unknown[] };
      // An event the ingress rejected would be "answered" and never told: none may be.
      statuses.push(response.status === 200 && body.rejected?.length ? 422 : response.status);
    }
    return statuses;
  }

  /** Each waiter's result; lost = those that did not end with the delivered outcome from the webhook. */
  async function settled(started: Array<{ result(): Promise<{ status: string; source: string }> }>) {
    const results = await Promise.all(started.map((w) => w.result()));
    return results.filter((r) => r.status !== 'delivered' || r.source !== 'webhook').length;
  }

  it(
    'starts an ingress while Temporal does not answer: it listens, is ready, answers, and tells once Temporal answers',
    { timeout: 600_000 },
    async () => {
      const { ids, started } = await waiters(MESSAGES);
      proxy.hold();
      let answered: number[];
      try {
        const frozen = await ingress({ TEMPORAL_ADDRESS: proxy.address });
        answered = await deliver(frozen.url, ids);
        expect(answered.filter((s) => s !== 200)).toEqual([]);
        expect((await stack.store.outbox.backlog()).untold).toBe(MESSAGES);
      } finally {
        proxy.release();
      }
      const lost = await settled(started);
      await waitFor(async () => (await stack.store.outbox.backlog()).untold === 0, 'an empty backlog', {
        timeoutMs: 30_000,
      });
      for (const p of processes.splice(1)) await p.kill();
      printSummary('ingress started while Temporal did not answer', {
        messages: MESSAGES,
        answered200: MESSAGES,
        lost,
      });
      expect(lost).toBe(0);
    },
  );

  it('tells every outcome an ingress answered and then died before telling', { timeout: 600_000 }, async () => {
    const first = await ingress({ TEMPORAL_ADDRESS: proxy.address });
    const { ids, started } = await waiters(MESSAGES);
    await proxy.cut();
    try {
      // Temporal unreachable from that ingress: every delivery is still answered 200, nothing is told.
      const statuses = await deliver(first.url, ids);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
      expect((await stack.store.outbox.backlog()).untold).toBe(MESSAGES);
      await first.kill();
    } finally {
      await proxy.restore();
    }
    // Another ingress, reaching Temporal, finds the untold outcomes on its sweep.
    const second = await ingress();
    const lost = await settled(started);
    await waitFor(async () => (await stack.store.outbox.backlog()).untold === 0, 'an empty backlog', {
      timeoutMs: 30_000,
    });
    // Its relay must not be the one that takes over in the next test.
    await second.kill();
    printSummary('ingress killed before telling', { messages: MESSAGES, answered200: MESSAGES, lost });
    expect(lost).toBe(0);
  });

  it("hands a killed relay's claimed workflows to another once its lease runs out", { timeout: 600_000 }, async () => {
    const first = await ingress({
      TEMPORAL_ADDRESS: proxy.address,
      MSGFLOW_RELAY_LEASE_SECONDS: String(LEASE_SECONDS),
    });
    const { ids, started } = await waiters(MESSAGES);
    // Temporal stops answering that ingress: its signals hang with their claims held.
    proxy.hold();
    let heldAtKill: Array<Record<string, unknown>> = [];
    try {
      expect((await deliver(first.url, ids)).filter((s) => s !== 200)).toEqual([]);
      const ownedByFirst = `%:${first.child.pid}:%`;
      await waitFor(
        async () => {
          heldAtKill = await rawRows(
            { file: storeFile() },
            `SELECT workflow_id, lease_until FROM relay_claims WHERE owner LIKE '${ownedByFirst}' AND lease_until > ${Date.now()}`,
          );
          return heldAtKill.length > 0;
        },
        'the first relay holding claims',
        { timeoutMs: 60_000, intervalMs: 20 },
      );
      await first.kill();
    } finally {
      proxy.release();
    }
    const killedAt = Date.now();
    expect(heldAtKill.length).toBeGreaterThan(0);

    const second = await ingress();
    const lost = await settled(started);
    const tookOver = await rawRows(
      { file: storeFile() },
      `SELECT workflow_id FROM relay_claims WHERE owner LIKE '%:${second.child.pid}:%'`,
    );
    printSummary('relay killed holding claims', {
      messages: MESSAGES,
      claimsHeldAtKill: heldAtKill.length,
      claimsTakenOver: tookOver.length,
      secondsToAllTold: Math.round((Date.now() - killedAt) / 1000),
      lost,
    });
    expect(lost).toBe(0);
    // Every workflow the dead relay held was told by the other one.
    const held = heldAtKill.map((r) => r.workflow_id);
    expect(tookOver.map((r) => r.workflow_id)).toEqual(expect.arrayContaining(held));
    expect((await stack.store.outbox.backlog()).untold).toBe(0);
  });
});
