/**
 * The relay over a real message store (SQLite file, so two relays can share it) with a stand-in for
 * Temporal's client that records each signal and answers as the test says: one signal per workflow with all
 * of its untold outcomes, marked told only once accepted; the rate rule; quiet workflows first; an ended
 * workflow's waiters released; Temporal down then back; one relay at a time per workflow.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client, ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MessageOutcome } from '../../src/definitions/message-outcomes.js';
import { type Relay, type RelayOptions, startRelay } from '../../src/ingress/relay.js';
import { silentLogger } from '../../src/log.js';
import { type MessageStore, openMessageStore } from '../../src/store/index.js';
import proto from '@temporalio/proto';

interface Signal {
  workflowId: string;
  ids: string[];
  at: number;
  /** The signal's argument as JSON, in bytes. */
  bytes: number;
}

type Answer = (workflowId: string) => Promise<void>;

/** Whether Temporal's server answers a probe (getSystemInfo), and how often it was probed. */
const server = { answers: true, probes: 0 };

function fakeClient(signals: Signal[], answer: { current: Answer }): Client {
  const client = {
    withDeadline: <R>(_deadline: number, fn: () => Promise<R>) => fn(),
    workflowService: {
      async getSystemInfo() {
        server.probes++;
        if (!server.answers) throw grpcError(14, 'UNAVAILABLE: connection refused');
        return {};
      },
    },
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

const { google, temporal } = proto;

/** RESOURCE_EXHAUSTED with its cause in the status details, as the server sends it for a busy workflow. */
function busyWorkflowError(): Error {
  const failure = temporal.api.errordetails.v1.ResourceExhaustedFailure.encode({
    cause: temporal.api.enums.v1.ResourceExhaustedCause.RESOURCE_EXHAUSTED_CAUSE_BUSY_WORKFLOW,
  }).finish();
  const status = google.rpc.Status.encode({
    code: 8,
    message: 'Workflow is busy.',
    details: [
      { type_url: 'type.googleapis.com/temporal.api.errordetails.v1.ResourceExhaustedFailure', value: failure },
    ],
  }).finish();
  const cause = Object.assign(new Error('8 RESOURCE_EXHAUSTED: Workflow is busy.'), {
    code: 8,
    metadata: { get: (key: string) => (key === 'grpc-status-details-bin' ? [Buffer.from(status)] : []) },
  });
  return new ServiceError('Failed to signal', { cause });
}

/** An error as the Temporal client throws it: a ServiceError whose cause carries the gRPC status code. */
function grpcError(code: number, details: string): Error {
  return new ServiceError(`${code} ${details}`, { cause: Object.assign(new Error(`${code} ${details}`), { code }) });
}

const delivered = (id: string) => ({ providerMessageId: id, status: 'delivered', timestamp: '2026-01-01T00:00:00Z' });
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await sleep(5);
}

/** The describe's tests run on a fake clock: Date and the timers the relay sets. */
function onFakeClock(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
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
    server.answers = true;
    server.probes = 0;
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
    onFakeClock();
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

    it("keeps a workflow's oldest age when a later page of its sweep sees only its newer outcomes", async () => {
      // The campaign's first 10 outcomes, then a single send's, then the campaign's next 15, a second apart.
      await store.register(
        'campaign',
        ids('c', 25).map((providerMessageId) => ({ providerMessageId })),
      );
      await store.register('sms', [{ providerMessageId: 's0' }]);
      await store.recordEvents(ids('c', 10).map(delivered));
      vi.setSystemTime(Date.now() + 1000);
      await store.recordEvents([delivered('s0')]);
      vi.setSystemTime(Date.now() + 1000);
      await store.recordEvents(ids('c', 25).slice(10).map(delivered));
      server.answers = false;
      answer.current = async () => {
        if (!server.answers) throw grpcError(14, 'UNAVAILABLE: connection refused');
      };
      // A page of one workflow (10 rows) a second: the campaign, the send, then the campaign's newer outcomes.
      relay({ workflowsPerRound: 1, rounds: 1, sweepMs: 1000, maxBackoffMs: 60_000 });
      await vi.advanceTimersByTimeAsync(2500);
      server.answers = true;
      await untilSignals(2);
      expect(signals.map((s) => s.workflowId)).toEqual(['campaign', 'sms']);
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

  it('tells a quiet workflow it is woken for ahead of the backlog it swept', async () => {
    for (let w = 0; w < 30; w++)
      await store.register(
        `campaign-${w}`,
        ids(`c${w}-`, 20).map((providerMessageId) => ({ providerMessageId })),
      );
    await store.register('otp', [{ providerMessageId: 'o0' }]);
    for (let w = 0; w < 30; w++) await store.recordEvents(ids(`c${w}-`, 20).map(delivered));
    // One workflow per round and one round at a time: the order is the relay's choice.
    const r = relay({ workflowsPerRound: 1, rounds: 1 });
    await until(() => signals.length > 0);
    await receive(r, ['o0']);
    await until(() => signals.length === 31);
    // At most the round on its way when it was woken goes before it.
    expect(signals.findIndex((s) => s.workflowId === 'otp')).toBeLessThanOrEqual(2);
  });

  it('tells a backlog it swept oldest first', async () => {
    const workflows = ids('sms-', 12).reverse();
    for (const w of workflows) {
      await store.register(w, [{ providerMessageId: `${w}m` }]);
      await store.recordEvents([delivered(`${w}m`)]);
      await sleep(2); // each recorded at a time of its own
    }
    relay({ workflowsPerRound: 1, rounds: 1 });
    await until(() => signals.length === workflows.length);
    expect(signals.map((s) => s.workflowId)).toEqual(workflows);
  });

  it('tells a backlog oldest first after an outage, whichever rounds the outage sent back', async () => {
    const workflows = ids('sms-', 12).reverse();
    for (const w of workflows) {
      await store.register(w, [{ providerMessageId: `${w}m` }]);
      await store.recordEvents([delivered(`${w}m`)]);
      await sleep(2); // each recorded at a time of its own
    }
    let attempts = 0;
    server.answers = false;
    // Each call waits a while (for a connection) and fails while the server is down: meanwhile the sweep finds
    // more of the backlog. A call waiting when the server returns goes through.
    answer.current = async () => {
      attempts++;
      await sleep(20);
      if (!server.answers) throw grpcError(4, 'DEADLINE_EXCEEDED: deadline exceeded');
    };
    // Fewer workflows in a round than in the backlog: each failed round goes back among the due ones.
    relay({ workflowsPerRound: 2, rounds: 1, maxBackoffMs: 20, sweepMs: 5 });
    // A few probes into the outage (the relay probes instead of trying rounds while Temporal does not answer),
    // with the sweep finding the rest of the backlog meanwhile.
    await until(() => attempts > 0 && server.probes >= 5);
    server.answers = true;
    await until(() => signals.length === workflows.length);
    // Round by round (a round's signals go out together).
    const rounds = (order: string[]) => ids('', order.length / 2).map((_, i) => order.slice(2 * i, 2 * i + 2).sort());
    expect(rounds(signals.map((s) => s.workflowId))).toEqual(rounds(workflows));
  });

  it('tells a backlog oldest first round by round, however many outcomes a round holds: what its budget put off goes next', async () => {
    // Heavy workflows (5 outcomes) and light ones (1), each recorded at a time of its own, oldest first.
    const workflows = ids('wf-', 12);
    const heavy = (w: string) => Number(w.slice(3)) % 3 === 0;
    const messagesOf = (w: string) => ids(`${w}m`, heavy(w) ? 5 : 1);
    for (const w of workflows) {
      await store.register(
        w,
        messagesOf(w).map((providerMessageId) => ({ providerMessageId })),
      );
      await store.recordEvents(messagesOf(w).map(delivered));
      await sleep(2);
    }
    // Rounds side by side, each claim and signal taking a while (the sweep pumps meanwhile); at most 6 outcomes are
    // in flight, so a claim puts off workflows that rounds chosen beside it would otherwise have passed.
    answer.current = async () => {
      await sleep(10);
    };
    const slowClaims: MessageStore = {
      ...store,
      outbox: {
        ...store.outbox,
        claim: async (workflowIds, options) => {
          const claimed = await store.outbox.claim(workflowIds, options);
          await sleep(20);
          return claimed;
        },
      },
    };
    relay({ workflowsPerRound: 4, rounds: 3, outcomesInFlight: 6, sweepMs: 5 }, slowClaims);
    await until(async () => (await store.outbox.backlog()).untold === 0);
    // Each workflow's told-at is the time its round chose to tell it: never later for an older one.
    const toldAt = await Promise.all(workflows.map(async (w) => (await store.message(`${w}m0`))!.waiters[0]!.toldAt!));
    const late = workflows.filter((w, i) => toldAt.slice(i + 1).some((younger) => younger < toldAt[i]!));
    expect(late).toEqual([]);
  });

  it('keeps at most outcomesInFlight of the backlog in signals on their way (a workflow with more alone)', async () => {
    const heavy = ids('heavy-', 3);
    for (const w of heavy) {
      await store.register(
        w,
        ids(`${w}m`, 5).map((providerMessageId) => ({ providerMessageId })),
      );
      await store.recordEvents(ids(`${w}m`, 5).map(delivered));
    }
    let inFlight = 0;
    let most = 0;
    answer.current = async () => {
      most = Math.max(most, ++inFlight);
      await sleep(10);
      inFlight--;
    };
    relay({ outcomesInFlight: 6, sweepMs: 5 });
    await until(async () => (await store.outbox.backlog()).untold === 0);
    expect(signals.map((s) => s.ids.length)).toEqual([5, 5, 5]);
    expect(most).toBe(1);
  });

  it('tells a quiet workflow in a round of its own, never in one with the backlog', async () => {
    const backlog = ids('sms-', 20);
    for (const w of backlog) await store.register(w, [{ providerMessageId: `${w}m` }]);
    await store.register('otp', [{ providerMessageId: 'o0' }]);
    for (const w of backlog) await store.recordEvents([delivered(`${w}m`)]);
    const batches: string[][] = [];
    const claiming: MessageStore = {
      ...store,
      outbox: {
        ...store.outbox,
        claim: (workflowIds, options) => {
          batches.push([...workflowIds]);
          return store.outbox.claim(workflowIds, options);
        },
      },
    };
    // Temporal down: the backlog's round goes back, due when the pause is over; the send is woken meanwhile, so
    // both are due at once when Temporal is back.
    server.answers = false;
    answer.current = async () => {
      if (!server.answers) throw grpcError(14, 'UNAVAILABLE: connection refused');
    };
    const r = relay({ maxBackoffMs: 100, sweepMs: 60_000 }, claiming);
    await until(() => batches.length > 0 && server.probes > 0);
    await receive(r, ['o0']);
    server.answers = true;
    await until(async () => (await store.outbox.backlog()).untold === 0);
    expect(batches.filter((b) => b.includes('otp'))).toEqual([['otp']]);
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
    server.answers = false;
    answer.current = async () => {
      attempts++;
      throw grpcError(14, 'UNAVAILABLE: connection refused');
    };
    relay({ maxBackoffMs: 200 });
    // Found by the sweep (a send the relay is woken for has Temporal probed every 100 ms instead: see below).
    await store.recordEvents([delivered('s0')]);
    await sleep(600);
    expect((await store.outbox.backlog()).untold).toBe(1);
    // One round found it down; after that the relay only probes the server (backing off), loading no outcomes.
    expect(attempts).toBe(1);
    expect(server.probes).toBeGreaterThan(1);
    expect(server.probes).toBeLessThan(8);
    // An outage is nobody's refusal.
    expect(await store.outbox.refusal('sms')).toBeNull();
    server.answers = true;
    answer.current = async () => {};
    await until(async () => (await store.outbox.backlog()).untold === 0);
    expect(signals.map((s) => s.workflowId)).toEqual(['sms']);
  });

  it('stops a round once Temporal does not answer: the rest are not tried, so the round ends within its lease', async () => {
    const workflows = ids('sms-', 20);
    for (const w of workflows) await store.register(w, [{ providerMessageId: `${w}m` }]);
    server.answers = false;
    const tried: string[] = [];
    answer.current = async (workflowId) => {
      tried.push(workflowId);
      throw grpcError(4, 'DEADLINE_EXCEEDED: deadline exceeded');
    };
    const r = relay({ workflowsPerRound: 20, signalsInFlight: 4, maxBackoffMs: 60_000, sweepMs: 60_000 });
    for (const w of workflows) await store.recordEvents([delivered(`${w}m`)]);
    r.wake(workflows.map((workflowId) => ({ workflowId })));
    await until(() => tried.length >= 4);
    await sleep(100);
    // The four calls in flight at once, and no more: the round stopped and the relay paused.
    expect(tried).toHaveLength(4);
    expect(await store.outbox.refusal('sms-0')).toBeNull();
  });

  it('holds a bounded number of workflows in memory whatever the backlog, and tells them all once Temporal is back', async () => {
    const workflows = ids('sms-', 300);
    for (const w of workflows) await store.register(w, [{ providerMessageId: `${w}m` }]);
    server.answers = false;
    answer.current = async () => {
      throw grpcError(14, 'UNAVAILABLE: connection refused');
    };
    const r = relay({ maxDue: 40, maxBackoffMs: 100, workflowsPerRound: 10, rounds: 2 });
    for (const w of workflows) await receive(r, [`${w}m`]);
    await sleep(300);
    expect(r.size()).toBeLessThanOrEqual(40);
    server.answers = true;
    answer.current = async () => {};
    await until(async () => (await store.outbox.backlog()).untold === 0);
    expect(signals.map((s) => s.workflowId).sort()).toEqual([...workflows].sort());
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

  describe('a workflow whose signals Temporal refuses, on a fake clock', () => {
    onFakeClock();
    /** Moves the clock on `ms`, 10 ms at a time. */
    const advance = async (ms: number) => {
      for (let t = 0; t < ms; t += 10) await vi.advanceTimersByTimeAsync(10);
    };
    const refusedAttempts: number[] = [];
    /** `bad`'s signals are refused as Temporal refuses a payload it will not take; every other is accepted. */
    const refuseBad = (code = 3) => {
      refusedAttempts.length = 0;
      answer.current = async (workflowId) => {
        if (workflowId !== 'bad') return;
        refusedAttempts.push(Date.now());
        throw grpcError(code, 'INVALID_ARGUMENT: refused');
      };
    };

    it('waits alone: quiet workflows woken meanwhile are told at once', async () => {
      refuseBad();
      await store.register('bad', [{ providerMessageId: 'b0' }]);
      const quiet = ids('sms-', 10);
      for (const w of quiet) await store.register(w, [{ providerMessageId: `${w}m` }]);
      const r = relay({ sweepMs: 60_000 });
      await receive(r, ['b0']);
      await advance(20);
      expect(refusedAttempts).toHaveLength(1);
      for (const w of quiet) {
        await receive(r, [`${w}m`]);
        await advance(20);
        // Told within the same 20 ms of the clock: no pause for all because one workflow was refused.
        expect(signals.map((s) => s.workflowId)).toContain(w);
      }
      expect((await store.outbox.backlog()).untold).toBe(1);
    });

    it('is retried on a growing backoff, then once every slowLaneMs, never dropped, and said once', async () => {
      refuseBad();
      const warnings: Array<{ message: string; fields: unknown }> = [];
      const logger = {
        ...silentLogger,
        warn: (message: string, fields?: unknown) => warnings.push({ message, fields }),
      };
      await store.register('bad', [{ providerMessageId: 'b0' }]);
      const r = relay({ sweepMs: 1000, slowLaneMs: 60_000, logger });
      await receive(r, ['b0']);
      await advance(5 * 60_000);
      // 250, 500, 1000 and 2000 ms apart, then a minute: five tries in the first few seconds, one a minute after.
      const gaps = refusedAttempts.slice(1).map((at, i) => at - refusedAttempts[i]!);
      expect(gaps.slice(0, 4).map((g) => Math.round(g / 250) * 250)).toEqual([250, 500, 1000, 2000]);
      expect(gaps.slice(4).every((g) => g >= 60_000 && g < 62_000)).toBe(true);
      expect(refusedAttempts.length).toBeGreaterThanOrEqual(8);
      expect(await store.outbox.refusal('bad')).toMatchObject({ refusals: refusedAttempts.length });
      expect((await store.outbox.backlog()).refusedWorkflows).toBe(1);
      expect(warnings.filter((w) => JSON.stringify(w.fields).includes('"bad"'))).toHaveLength(1);
      // Accepted again: told, and no longer counted as refused.
      answer.current = async () => {};
      await advance(61_000);
      expect(signals.map((s) => s.workflowId)).toEqual(['bad']);
      expect(await store.outbox.refusal('bad')).toBeNull();
    });

    it("a busy workflow's refusal (RESOURCE_EXHAUSTED, busy workflow) is its own; no answer in time with the server up too", async () => {
      const failures: Record<string, Error> = {
        busy: busyWorkflowError(),
        slow: grpcError(4, 'DEADLINE_EXCEEDED: deadline exceeded'),
      };
      for (const w of Object.keys(failures)) await store.register(w, [{ providerMessageId: `${w}m` }]);
      await store.register('quiet', [{ providerMessageId: 'q0' }]);
      answer.current = async (workflowId) => {
        if (failures[workflowId]) throw failures[workflowId];
      };
      const r = relay({ sweepMs: 60_000 });
      await receive(r, ['busym', 'slowm']);
      await advance(20);
      await receive(r, ['q0']);
      await advance(20);
      expect(signals.map((s) => s.workflowId)).toEqual(['quiet']);
      expect(await store.outbox.refusal('busy')).toMatchObject({ refusals: 1 });
      expect(await store.outbox.refusal('slow')).toMatchObject({ refusals: 1 });
    });

    it('a send woken while the relay is paused for an outage is told at once if Temporal is back', async () => {
      await store.register('first', [{ providerMessageId: 'f0' }]);
      await store.register('quiet', [{ providerMessageId: 'q0' }]);
      server.answers = false;
      answer.current = async () => {
        throw grpcError(14, 'UNAVAILABLE: connection refused');
      };
      const r = relay({ sweepMs: 60_000 });
      await receive(r, ['f0']);
      await advance(20);
      // Paused for 250 ms; Temporal comes back meanwhile, and a quiet send is woken.
      server.answers = true;
      answer.current = async () => {};
      await receive(r, ['q0']);
      await advance(50);
      expect(signals.map((s) => s.workflowId).sort()).toEqual(['first', 'quiet']);
    });

    it('a send woken during a long outage is told within a probe of Temporal coming back, not when the backoff ends', async () => {
      await store.register('first', [{ providerMessageId: 'f0' }]);
      await store.register('quiet', [{ providerMessageId: 'q0' }]);
      server.answers = false;
      answer.current = async () => {
        if (!server.answers) throw grpcError(14, 'UNAVAILABLE: connection refused');
      };
      const r = relay({ sweepMs: 60_000, maxBackoffMs: 5000 });
      await receive(r, ['f0']);
      // Long enough for the backoff to grow to 5 s.
      await advance(12_000);
      await receive(r, ['q0']);
      await advance(20);
      expect(signals).toEqual([]);
      // Back while the send waits: told within a probe's interval, whatever is left of the pause.
      server.answers = true;
      await advance(150);
      expect(signals.map((s) => s.workflowId)).toContain('quiet');
    });

    it('an overloaded Temporal (RESOURCE_EXHAUSTED for any other cause) pauses everything, counted against nobody', async () => {
      await store.register('first', [{ providerMessageId: 'f0' }]);
      await store.register('quiet', [{ providerMessageId: 'q0' }]);
      answer.current = async () => {
        throw grpcError(8, 'RESOURCE_EXHAUSTED: namespace rate limit exceeded');
      };
      const r = relay({ sweepMs: 60_000 });
      await receive(r, ['f0']);
      await advance(20);
      let attempts = 0;
      answer.current = async () => {
        attempts++;
      };
      await receive(r, ['q0']);
      await advance(100);
      // Paused (the first backoff is 250 ms): the quiet workflow waits with everything else.
      expect(attempts).toBe(0);
      await advance(500);
      expect(signals.map((s) => s.workflowId).sort()).toEqual(['first', 'quiet']);
      expect(await store.outbox.refusal('first')).toBeNull();
    });
  });
});
