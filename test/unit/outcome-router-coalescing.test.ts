/**
 * The outcome router's coalescing, with a fake store (which workflow waits for which message) and a fake
 * Temporal client that records every signal: requests that arrive together for one workflow share one
 * signal, and each request is answered only once the signal carrying its outcomes was accepted.
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/api/common.js';
import type { MessageStatusEvent } from '../../src/api/events.js';
import type { MessageOutcome } from '../../src/definitions/message-outcomes.js';
import { outcomeRouter, StoreUnavailableError, TemporalUnavailableError } from '../../src/ingress/outcome-router.js';
import type { MessageStore, StatusEventRecord, WaiterOutcomes } from '../../src/store/index.js';

const WHEN = formatTimestamp(new Date('2026-01-02T03:04:05Z'));

function statusEvent(providerMessageId: string): MessageStatusEvent {
  return {
    event: 'message.delivered',
    mobile_number: '+2348012345678',
    provider_message_id: providerMessageId,
    status: 'delivered',
    timestamp: WHEN,
  };
}

/** Answers each recorded event with its waiter (from `waiters`, message id → workflow id). */
function fakeStore(
  waiters: Record<string, string>,
  { down = false, kept = [] as Array<{ reason: string; event: unknown }> } = {},
): MessageStore {
  const recordRejected = async (reason: string, event: unknown) => {
    if (down) throw new Error('SQLITE_BUSY: database is locked');
    kept.push({ reason, event });
  };
  const recordEvents = async (events: readonly StatusEventRecord[]): Promise<WaiterOutcomes[]> => {
    if (down) throw new Error('connection refused');
    const byWorkflow = new Map<string, WaiterOutcomes>();
    for (const e of events) {
      const workflowId = waiters[e.providerMessageId];
      if (!workflowId) continue;
      const entry = byWorkflow.get(workflowId) ?? { workflowId, outcomes: [] };
      entry.outcomes.push({
        providerMessageId: e.providerMessageId,
        status: 'delivered',
        timestamp: e.timestamp,
        eventId: e.eventId ?? null,
      });
      byWorkflow.set(workflowId, entry);
    }
    return [...byWorkflow.values()];
  };
  return { recordEvents, recordRejected } as unknown as MessageStore;
}

interface Signal {
  workflowId: string;
  name: string;
  outcomes: MessageOutcome[];
}

/** The surface the router uses: `withDeadline(deadline, fn)` and `workflow.getHandle(id).signal(def, arg)`. */
function fakeClient(answer: (workflowId: string) => Promise<void> = async () => {}) {
  const signals: Signal[] = [];
  const client = {
    withDeadline: <R>(_deadline: number, fn: () => Promise<R>) => fn(),
    workflow: {
      getHandle: (workflowId: string) => ({
        async signal(definition: { name: string }, outcomes: MessageOutcome[]) {
          await answer(workflowId);
          signals.push({ workflowId, name: definition.name, outcomes });
        },
      }),
    },
  };
  return { client: client as unknown as Client, signals };
}

describe('outcome router', () => {
  it('gives one signal to a workflow for single-event requests that arrive together', async () => {
    const { client, signals } = fakeClient();
    const router = outcomeRouter({ store: fakeStore({ m1: 'sms:a', m2: 'sms:a', m3: 'sms:a' }), client });
    const answered: string[] = [];
    await Promise.all(
      ['m1', 'm2', 'm3'].map((id) =>
        router.deliver([statusEvent(id)], `delivery-${id}`).then(() => {
          // Each request resolves only after the signal that carries its outcome was accepted.
          expect(signals.flatMap((s) => s.outcomes.map((o) => o.providerMessageId))).toContain(id);
          answered.push(id);
        }),
      ),
    );
    expect(answered.sort()).toEqual(['m1', 'm2', 'm3']);
    expect(signals).toHaveLength(1);
    expect(signals[0]).toMatchObject({ workflowId: 'sms:a', name: 'messageOutcomes' });
    expect(signals[0]!.outcomes).toEqual(
      ['m1', 'm2', 'm3'].map((id) => ({
        providerMessageId: id,
        status: 'delivered',
        timestamp: WHEN,
        source: 'webhook',
      })),
    );
  });

  it('signals a quiet workflow without waiting for the window, and gathers for it once it is busy', async () => {
    const { client, signals } = fakeClient();
    const store = fakeStore({ m1: 'sms:a', m2: 'sms:a', m3: 'sms:a' });
    // A window far beyond the test's timeout: the first delivery is answered only if it does not wait for it.
    const quiet = outcomeRouter({ store, client, coalesceMs: 60_000 });
    await quiet.deliver([statusEvent('m1')], 'd1');
    expect(signals.map((s) => s.outcomes.length)).toEqual([1]);

    const busy = outcomeRouter({ store, client, coalesceMs: 200 });
    await busy.deliver([statusEvent('m1')], 'd1');
    // Signalled a moment ago: what comes next gathers, across separate turns of the event loop.
    const second = busy.deliver([statusEvent('m2')], 'd2');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all([second, busy.deliver([statusEvent('m3')], 'd3')]);
    expect(signals.map((s) => s.outcomes.map((o) => o.providerMessageId))).toEqual([['m1'], ['m1'], ['m2', 'm3']]);
  });

  it('does not answer a request before its signal was accepted', async () => {
    let accept!: () => void;
    const accepted = new Promise<void>((resolve) => (accept = resolve));
    const { client, signals } = fakeClient(() => accepted);
    const router = outcomeRouter({ store: fakeStore({ m1: 'sms:a' }), client });
    let done = false;
    const delivery = router.deliver([statusEvent('m1')], 'd1').then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 100)); // well past the coalescing window
    expect(done).toBe(false);
    accept();
    await delivery;
    expect(done).toBe(true);
    expect(signals).toHaveLength(1);
  });

  it('signals different workflows separately, each with its own outcomes', async () => {
    const { client, signals } = fakeClient();
    const router = outcomeRouter({
      store: fakeStore({ m1: 'sms:a', m2: 'campaign:b', m3: 'sms:a' }),
      client,
    });
    await router.deliver([statusEvent('m1'), statusEvent('m2'), statusEvent('m3'), statusEvent('nobody')], 'd1');
    const byWorkflow = Object.fromEntries(
      signals.map((s) => [s.workflowId, s.outcomes.map((o) => o.providerMessageId)]),
    );
    expect(signals).toHaveLength(2);
    expect(byWorkflow).toEqual({ 'sms:a': ['m1', 'm3'], 'campaign:b': ['m2'] });
  });

  it('counts a signal to a closed workflow as delivered', async () => {
    const { client, signals } = fakeClient(async (workflowId) => {
      throw new WorkflowNotFoundError('workflow not found', workflowId, undefined);
    });
    const router = outcomeRouter({ store: fakeStore({ m1: 'sms:closed' }), client });
    await expect(router.deliver([statusEvent('m1')], 'd1')).resolves.toBeUndefined();
    expect(signals).toEqual([]);
  });

  it('rejects every caller of a batch whose signal failed with TemporalUnavailableError', async () => {
    let calls = 0;
    const { client } = fakeClient(async () => {
      calls++;
      throw new Error('14 UNAVAILABLE: connection refused');
    });
    const router = outcomeRouter({ store: fakeStore({ m1: 'sms:a', m2: 'sms:a' }), client, attempts: 2 });
    const results = await Promise.allSettled([
      router.deliver([statusEvent('m1')], 'd1'),
      router.deliver([statusEvent('m2')], 'd2'),
    ]);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(TemporalUnavailableError);
    }
    expect(calls).toBe(2); // one coalesced signal, tried `attempts` times
  });

  it('turns a store failure into StoreUnavailableError and signals nothing', async () => {
    const { client, signals } = fakeClient();
    const router = outcomeRouter({ store: fakeStore({ m1: 'sms:a' }, { down: true }), client });
    await expect(router.deliver([statusEvent('m1')], 'd1')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(signals).toEqual([]);
  });

  it('keeps the rejected events of a delivery, and a store that cannot keep them fails it as unavailable', async () => {
    const { client, signals } = fakeClient();
    const kept: Array<{ reason: string; event: unknown }> = [];
    const router = outcomeRouter({ store: fakeStore({ m1: 'sms:a' }, { kept }), client });
    await router.deliver([statusEvent('m1')], 'd1', [{ index: 1, reason: 'status: invalid', event: { bad: 1 } }]);
    expect(kept).toEqual([{ reason: 'status: invalid', event: { bad: 1 } }]);
    expect(signals.map((s) => s.workflowId)).toEqual(['sms:a']);

    const down = outcomeRouter({ store: fakeStore({}, { down: true }), client });
    await expect(down.deliver([], 'd2', [{ index: 0, reason: 'not JSON', event: '{' }])).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
  });
});
