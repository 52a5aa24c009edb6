/**
 * The outcome router records a delivery's events (and its rejected ones) in the store and wakes the relay
 * for the workflows waiting for them; it never waits on Temporal. A real message store (SQLite in memory);
 * the relay is a recording stand-in.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageStatusEvent } from '../../src/api/events.js';
import { outcomeRouter, StoreUnavailableError } from '../../src/ingress/outcome-router.js';
import type { Relay } from '../../src/ingress/relay.js';
import { type MessageStore, openMessageStore } from '../../src/store/index.js';

const event = (id: string): MessageStatusEvent => ({
  event: 'message.delivered',
  mobile_number: '+12025550100',
  provider_message_id: id,
  status: 'delivered',
  timestamp: '2026-01-01T00:00:00Z',
});

describe('outcome router', () => {
  let store: MessageStore;
  let woken: string[][];
  /** Each wake's workflows; `(all final)` when one waits for nothing else. */
  const relay: Pick<Relay, 'wake'> = {
    wake: (waiting) => void woken.push([...waiting].map((w) => `${w.workflowId}${w.allFinal ? ' (all final)' : ''}`)),
  };

  beforeEach(async () => {
    woken = [];
    store = await openMessageStore({ file: ':memory:' });
    await store.register('campaign-a', [{ providerMessageId: 'm1' }, { providerMessageId: 'm2' }]);
    await store.register('sms-b', [{ providerMessageId: 'm3' }]);
  });
  afterEach(async () => {
    await store.close();
  });

  it("tells the relay when a workflow's last awaited outcome arrived", async () => {
    const router = outcomeRouter({ store, relay });
    await router.deliver([event('m1')], 'd1');
    await router.deliver([event('m2')], 'd2');
    expect(woken).toEqual([['campaign-a'], ['campaign-a (all final)']]);
  });

  it('resolves once the store holds the events, untold, and wakes the relay for their workflows', async () => {
    const router = outcomeRouter({ store, relay });
    await Promise.all([
      router.deliver([event('m1'), event('m3')], 'd1'),
      router.deliver([event('m2'), event('orphan')], 'd2'),
    ]);
    expect(woken.flat().sort()).toEqual(['campaign-a (all final)', 'campaign-a (all final)', 'sms-b (all final)']);
    expect((await store.outbox.untold({ limit: 10 })).workflows.map((w) => w.workflowId).sort()).toEqual([
      'campaign-a',
      'sms-b',
    ]);
    expect((await store.outbox.backlog()).untold).toBe(3);
    // An event nobody waits for wakes nobody, and is kept for its sender.
    expect(await store.outcomes(['orphan'])).toHaveLength(1);
  });

  it('keeps the rejected events of a delivery; a store that cannot record fails it as unavailable', async () => {
    const router = outcomeRouter({ store, relay });
    await router.deliver([], 'd1', [{ index: 0, reason: 'not JSON', event: '{' }]);
    expect((await store.rejected({ limit: 10 })).rows.map((r) => r.reason)).toEqual(['not JSON']);
    await store.close();
    await expect(router.deliver([event('m1')], 'd2')).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(router.deliver([], 'd3', [{ index: 0, reason: 'x', event: 1 }])).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    expect(woken).toEqual([]);
    store = await openMessageStore({ file: ':memory:' }); // for afterEach
  });
});
