/**
 * How the outcome router batches signals: a real message store (SQLite in memory) and a recording stand-in
 * for Temporal's client (a faked collaborator) whose signal calls answer when the test says so.
 */
import type { Client } from '@temporalio/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageStatusEvent } from '../../src/api/events.js';
import type { MessageOutcome } from '../../src/definitions/message-outcomes.js';
import { outcomeRouter } from '../../src/ingress/outcome-router.js';
import { type MessageStore, openMessageStore } from '../../src/store/index.js';

interface SignalCall {
  workflowId: string;
  outcomes: MessageOutcome[];
  answer(): void;
}

/** Records each signal call and holds it open until `answer()`. */
function recordingClient(calls: SignalCall[]): Client {
  const client = {
    withDeadline: (_deadline: number, fn: () => Promise<unknown>) => fn(),
    workflow: {
      getHandle: (workflowId: string) => ({
        signal: (_signal: unknown, outcomes: MessageOutcome[]) =>
          new Promise<void>((resolve) => calls.push({ workflowId, outcomes, answer: resolve })),
      }),
    },
  };
  return client as unknown as Client;
}

const event = (id: string): MessageStatusEvent => ({
  event: 'message.delivered',
  mobile_number: '+12025550100',
  provider_message_id: id,
  status: 'delivered',
  timestamp: '2026-01-01T00:00:00Z',
});

/** Lets timers and the store's queued work run until `done()` holds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe('outcome router', () => {
  let store: MessageStore;
  const calls: SignalCall[] = [];

  beforeEach(async () => {
    calls.length = 0;
    store = await openMessageStore({ file: ':memory:' });
    await store.register(
      'campaign-a',
      Array.from({ length: 10 }, (_, i) => ({ providerMessageId: `m${i}` })),
    );
  });
  afterEach(async () => {
    await store.close();
  });

  it('keeps one signal in flight per workflow and sends what arrived meanwhile in the next one, at once', async () => {
    const router = outcomeRouter({ store, client: recordingClient(calls), coalesceMs: 1 });
    const answered: string[] = [];
    const first = router.deliver([event('m0')], 'evt_0').then(() => answered.push('evt_0'));
    await until(() => calls.length === 1);

    const second = router.deliver([event('m1')], 'evt_1').then(() => answered.push('evt_1'));
    const third = router.deliver([event('m2')], 'evt_2').then(() => answered.push('evt_2'));
    // Well past the window: still one call, because the first has not been answered.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(calls).toHaveLength(1);
    expect(answered).toEqual([]);

    calls[0]!.answer();
    await first;
    await until(() => calls.length === 2);
    expect(calls[1]!.outcomes.map((o) => o.providerMessageId).sort()).toEqual(['m1', 'm2']);
    expect(answered).toEqual(['evt_0']);

    calls[1]!.answer();
    await Promise.all([second, third]);
    expect(answered.sort()).toEqual(['evt_0', 'evt_1', 'evt_2']);
  });

  it('sends a batch that outgrew the limit while it waited as several signals, none over the limit', async () => {
    const router = outcomeRouter({ store, client: recordingClient(calls), coalesceMs: 1, maxOutcomesPerSignal: 3 });
    const first = router.deliver([event('m0')], 'evt_0');
    await until(() => calls.length === 1);
    const rest = router.deliver(
      Array.from({ length: 7 }, (_, i) => event(`m${i + 1}`)),
      'evt_1',
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    calls[0]!.answer();
    await first;

    // The seven waiting outcomes go as 3 + 3 + 1, one after the other.
    for (let n = 2; n <= 4; n++) {
      await until(() => calls.length === n);
      calls[n - 1]!.answer();
    }
    await rest;
    expect(calls.map((c) => c.outcomes.length)).toEqual([1, 3, 3, 1]);
    expect(new Set(calls.flatMap((c) => c.outcomes.map((o) => o.providerMessageId))).size).toBe(8);
  });
});
