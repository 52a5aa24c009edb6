/**
 * The relay over a real message store (SQLite file, so two relays can share it) with a stand-in for
 * Temporal's client that records each signal and answers as the test says: one signal per workflow with all
 * of its untold outcomes, marked told only once accepted; the rate rule; quiet workflows first; an ended
 * workflow's waiters released; Temporal down then back; one relay at a time per workflow.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MessageOutcome } from '../../src/definitions/message-outcomes.js';
import { type Relay, type RelayOptions, startRelay } from '../../src/ingress/relay.js';
import { type MessageStore, openMessageStore } from '../../src/store/index.js';

interface Signal {
  workflowId: string;
  ids: string[];
  at: number;
  /** The signal's argument as JSON, in bytes. */
  bytes: number;
}

type Answer = (workflowId: string) => Promise<void>;

function fakeClient(signals: Signal[], answer: { current: Answer }): Client {
  const client = {
    withDeadline: <R>(_deadline: number, fn: () => Promise<R>) => fn(),
    workflow: {
      getHandle: (workflowId: string) => ({
        async signal(_definition: unknown, outcomes: MessageOutcome[]) {
          await answer.current(workflowId);
          signals.push({
            workflowId,
            ids: outcomes.map((o) => o.providerMessageId).sort(),
            at: Date.now(),
            bytes: Buffer.byteLength(JSON.stringify(outcomes)),
          });
        },
      }),
    },
  };
  return client as unknown as Client;
}

const delivered = (id: string) => ({ providerMessageId: id, status: 'delivered', timestamp: '2026-01-01T00:00:00Z' });
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await sleep(5);
}

describe('relay', () => {
  let folder: string;
  let store: MessageStore;
  let signals: Signal[];
  const answer: { current: Answer } = { current: async () => {} };
  const relays: Relay[] = [];
  /** Signals a test holds open; let go after each test, so its relays can close. */
  const held: Array<() => void> = [];

  const relay = (options: Partial<RelayOptions> = {}, on = store) => {
    const started = startRelay({ store: on, client: fakeClient(signals, answer), sweepMs: 50, ...options });
    relays.push(started);
    return started;
  };
  /** Records the events and wakes the relay, as the ingress does. */
  const receive = async (r: Relay, messageIds: string[]) => {
    const waiting = await store.recordEvents(messageIds.map(delivered));
    r.wake(waiting);
  };

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msgflow-relay-'));
    store = await openMessageStore({ file: join(folder, 'store.db') });
    signals = [];
    answer.current = async () => {};
  });
  afterEach(async () => {
    answer.current = async () => {};
    for (const release of held.splice(0)) release();
    await Promise.all(relays.splice(0).map((r) => r.close()));
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('tells each workflow all of its untold outcomes in one signal, then they are told', async () => {
    await store.register(
      'campaign',
      ids('c', 50).map((providerMessageId) => ({ providerMessageId })),
    );
    await store.register('sms', [{ providerMessageId: 's0' }]);
    const r = relay();
    await receive(r, [...ids('c', 50), 's0']);
    await until(async () => (await store.outbox.backlog()).untold === 0);
    expect(signals.map((s) => [s.workflowId, s.ids.length]).sort()).toEqual([
      ['campaign', 50],
      ['sms', 1],
    ]);
  });

  it('tells a busy workflow at most signalsPerSecond times a second, however often it is woken', async () => {
    await store.register(
      'campaign',
      ids('c', 40).map((providerMessageId) => ({ providerMessageId })),
    );
    const r = relay({ signalsPerSecond: 5 });
    for (const id of ids('c', 40)) {
      await receive(r, [id]);
      await sleep(10);
    }
    await until(async () => (await store.outbox.backlog()).untold === 0);
    expect(signals.flatMap((s) => s.ids).sort()).toEqual(ids('c', 40).sort());
    // The last signal may come early: with c39 the workflow waits for nothing else. A signal's time is taken
    // after its claim, whose store work takes longer on a busy machine: a gap may fall short of the 200 ms by that
    // much, never to the ~10 ms between wakes.
    const gaps = signals.slice(1, -1).map((s, i) => s.at - signals[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(150);
    expect(signals.length).toBeLessThan(40);
  });

  describe('on a fake clock', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    });
    afterEach(() => {
      vi.useRealTimers();
    });
    /** Moves the clock on until `n` signals were accepted. */
    const untilSignals = async (n: number) => {
      while (signals.length < n) await vi.advanceTimersByTimeAsync(10);
    };
    /** A campaign of c0, c1, c2; the relay at 2 signals a second, not sweeping meanwhile. */
    const campaign = async (on = store) => {
      await store.register(
        'campaign',
        ids('c', 3).map((providerMessageId) => ({ providerMessageId })),
      );
      return relay({ signalsPerSecond: 2, sweepMs: 60_000 }, on);
    };

    it('tells a busy workflow again one interval after its last signal, however long marking it told took', async () => {
      // Each told mark takes 300 ms of the clock (a busy store).
      const slowStore: MessageStore = {
        ...store,
        outbox: {
          ...store.outbox,
          finish: (...args) => {
            vi.setSystemTime(Date.now() + 300);
            return store.outbox.finish(...args);
          },
        },
      };
      const r = await campaign(slowStore);
      await receive(r, ['c0']);
      await untilSignals(1);
      // c2 stays pending: the workflow still waits, so no early signal.
      await receive(r, ['c1']);
      await untilSignals(2);
      expect(signals[1]!.at - signals[0]!.at).toBeGreaterThanOrEqual(500);
      expect(signals[1]!.at - signals[0]!.at).toBeLessThan(600);
    });

    it('tells a busy workflow its last awaited outcomes at once, ahead of the rate rule', async () => {
      const r = await campaign();
      await receive(r, ['c0']);
      await untilSignals(1);
      await vi.advanceTimersByTimeAsync(100);
      await receive(r, ['c1', 'c2']);
      await untilSignals(2);
      expect(signals[1]).toMatchObject({ ids: ['c1', 'c2'] });
      expect(signals[1]!.at - signals[0]!.at).toBeLessThan(200);
    });

    it('tells a busy workflow its last awaited outcomes right after the signal that was on its way when they came', async () => {
      let letGo: (() => void) | undefined;
      answer.current = () => new Promise<void>((resolve) => (letGo = resolve));
      const r = await campaign();
      await receive(r, ['c0']);
      while (!letGo) await vi.advanceTimersByTimeAsync(10);
      answer.current = async () => {};
      await receive(r, ['c1', 'c2']);
      letGo();
      await untilSignals(2);
      expect(signals.map((s) => s.ids)).toEqual([['c0'], ['c1', 'c2']]);
      expect(signals[1]!.at - signals[0]!.at).toBeLessThan(200);
    });
  });

  it("keeps each signal within Temporal's payload limit, however long the provider's message ids", async () => {
    // 10,000 outcomes with 200-character ids: over 3 MB of JSON in one signal.
    const longIds = ids('c', 10_000).map((id) => id.padEnd(200, 'x'));
    await store.register(
      'campaign',
      longIds.map((providerMessageId) => ({ providerMessageId })),
    );
    await store.recordEvents(longIds.map(delivered));
    relay({ signalsPerSecond: 50 });
    await until(async () => (await store.outbox.backlog()).untold === 0);
    expect(signals.length).toBeGreaterThan(1);
    expect(Math.max(...signals.map((s) => s.bytes))).toBeLessThanOrEqual(2_000_000);
    expect(signals.flatMap((s) => s.ids).sort()).toEqual(longIds.sort());
  });

  it('tells a quiet workflow ahead of a backlog', async () => {
    for (let w = 0; w < 30; w++)
      await store.register(
        `campaign-${w}`,
        ids(`c${w}-`, 20).map((providerMessageId) => ({ providerMessageId })),
      );
    await store.register('otp', [{ providerMessageId: 'o0' }]);
    for (let w = 0; w < 30; w++) await store.recordEvents(ids(`c${w}-`, 20).map(delivered));
    await store.recordEvents([delivered('o0')]);
    // One workflow per round and one round at a time: the order is the relay's choice.
    relay({ workflowsPerRound: 1, rounds: 1 });
    await until(() => signals.length === 31);
    expect(signals[0]!.workflowId).toBe('otp');
  });

  it('tells a quiet workflow woken during a catch-up at once, in a round of its own', async () => {
    for (let w = 0; w < 30; w++) await store.register(`campaign-${w}`, [{ providerMessageId: `c${w}` }]);
    await store.register('otp', [{ providerMessageId: 'o0' }]);
    for (let w = 0; w < 30; w++) await store.recordEvents([delivered(`c${w}`)]);
    // The backlog's signals hang until the test lets them go; the quiet workflow's go at once.
    answer.current = (workflowId) =>
      workflowId === 'otp' ? Promise.resolve() : new Promise<void>((resolve) => held.push(resolve));
    // One round at a time: the sweep's round of the backlog occupies it.
    const r = relay({ rounds: 1 });
    await until(() => held.length > 0);
    await receive(r, ['o0']);
    await until(() => signals.some((s) => s.workflowId === 'otp'));
    expect(signals.map((s) => s.workflowId)).toEqual(['otp']);
    answer.current = async () => {};
    for (const release of held.splice(0)) release();
    await until(async () => (await store.outbox.backlog()).untold === 0);
  });

  it('marks nothing told while Temporal is down, backs off, and tells everything once it is back', async () => {
    await store.register('sms', [{ providerMessageId: 's0' }]);
    let attempts = 0;
    answer.current = async () => {
      attempts++;
      throw new Error('14 UNAVAILABLE: connection refused');
    };
    const r = relay({ maxBackoffMs: 200 });
    await receive(r, ['s0']);
    await sleep(600);
    expect((await store.outbox.backlog()).untold).toBe(1);
    // Backing off: a handful of attempts in 600 ms, not one per sweep or wake.
    expect(attempts).toBeGreaterThan(0);
    expect(attempts).toBeLessThan(8);
    answer.current = async () => {};
    await until(async () => (await store.outbox.backlog()).untold === 0);
    expect(signals.map((s) => s.workflowId)).toEqual(['sms']);
  });

  it('releases the waiters of a workflow that has ended', async () => {
    await store.register('gone', [{ providerMessageId: 'g0' }]);
    answer.current = async (workflowId) => {
      throw new WorkflowNotFoundError('workflow not found', workflowId, undefined);
    };
    const r = relay();
    await receive(r, ['g0']);
    await until(async () => (await store.outbox.backlog()).untold === 0);
    expect((await store.message('g0'))?.waiters[0]?.releasedAt).not.toBeNull();
  });

  it('finds outcomes it was not woken for (another ingress recorded them) on its sweep', async () => {
    await store.register('sms', [{ providerMessageId: 's0' }]);
    relay();
    await store.recordEvents([delivered('s0')]);
    await until(() => signals.length === 1);
    expect(signals[0]!.ids).toEqual(['s0']);
  });

  it('two relays on one store: each outcome told once, each workflow by one relay at a time', async () => {
    const other = await openMessageStore({ file: join(folder, 'store.db') });
    try {
      const workflows = ids('wf', 20);
      for (const w of workflows)
        await store.register(
          w,
          ids(`${w}-`, 5).map((providerMessageId) => ({ providerMessageId })),
        );
      let inFlight = 0;
      let overlapping = 0;
      const busy = new Set<string>();
      answer.current = async (workflowId) => {
        if (busy.has(workflowId)) overlapping++;
        busy.add(workflowId);
        inFlight++;
        await sleep(5);
        inFlight--;
        busy.delete(workflowId);
      };
      const [a, b] = [relay({ owner: 'a' }), relay({ owner: 'b' }, other)];
      for (const w of workflows) {
        const waiting = await store.recordEvents(ids(`${w}-`, 5).map(delivered));
        a.wake(waiting);
        b.wake(waiting);
      }
      await until(async () => (await store.outbox.backlog()).untold === 0);
      expect(overlapping).toBe(0);
      expect(signals.flatMap((s) => s.ids).sort()).toEqual(workflows.flatMap((w) => ids(`${w}-`, 5)).sort());
      expect(inFlight).toBe(0);
    } finally {
      await Promise.all(relays.splice(0).map((r) => r.close()));
      await other.close();
    }
  });
});
