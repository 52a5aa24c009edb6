/**
 * The webhook ingress end to end: signed events from the sandbox and from the test itself are recorded in
 * the message store and reach the workflows waiting for them through a real Temporal server, many at once;
 * an event nobody waits for yet is kept for its sender; a delivery is answered once the store holds it, even
 * while Temporal cannot be reached, and the provider is asked to redeliver (503) only while the store cannot.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { formatTimestamp } from '../../src/api/common.js';
import { MAX_EVENTS_PER_BATCH } from '../../src/api/constants.js';
import type { FinalStatus, MessageStatusEvent } from '../../src/api/events.js';
import { generateWebhookSecret, signWebhook } from '../../src/api/signature.js';
import { messageOutcomesSignal } from '../../src/definitions/message-outcomes.js';
import { isReady } from '../../src/ingress/from-env.js';
import { outcomeRouter } from '../../src/ingress/outcome-router.js';
import { startRelay } from '../../src/ingress/relay.js';
import { startIngress } from '../../src/ingress/server.js';
import { standardWebhooksVerifier } from '../../src/ingress/verifier.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { openMessageStore } from '../../src/store/index.js';
import { startTestStack } from '../support/stack.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const NUMBER = `+${MAGIC_NUMBERS.delivered}`;
/** Long enough that only a signal can settle a wait in these tests, never the end of the window. */
const LONG_WAIT_MS = 10 * 60 * 1000;

function statusEvent(providerMessageId: string, status: FinalStatus, at = new Date()): MessageStatusEvent {
  return {
    event: `message.${status}`,
    mobile_number: NUMBER,
    provider_message_id: providerMessageId,
    status,
    timestamp: formatTimestamp(at),
  };
}

/** Distinct valid numbers that the sandbox delivers. */
const numbers = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => `23480${String(20_000_000 + from + i)}`);

describe('webhook ingress', () => {
  let stack: RunningStack;
  const post = async (
    body: unknown,
    { secret = stack.webhookSecret, sentAt = Date.now(), url = stack.ingress.webhookUrl } = {},
  ) => {
    const raw = typeof body === 'string' ? body : JSON.stringify(body);
    const headers = signWebhook([secret], `msg_${randomUUID()}`, Math.floor(sentAt / 1000), raw);
    return fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: raw });
  };
  const signalsReceived = async (workflowId: string) => {
    const history = await stack.temporal.workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? []).filter(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === messageOutcomesSignal.name,
    ).length;
  };
  /** Resolves once the store records `workflowId` as waiting for `id` (its sending activity has run). */
  const awaited = (id: string, workflowId: string) =>
    waitFor(
      async () => (await stack.store.message(id))?.waiters.some((w) => w.workflowId === workflowId) === true,
      `${workflowId} to wait for ${id}`,
      { timeoutMs: 30_000, intervalMs: 25 },
    );

  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('gives a sendSms workflow the first final state; duplicates and a later conflicting event change nothing', async () => {
    // A message that never turns final on its own: only the events posted here can settle it.
    const started = await stack.msgflow.sendSms({
      recipients: [MAGIC_NUMBERS.neverFinal],
      sender: 'ACME',
      message: 'first wins',
      waitWindowMs: LONG_WAIT_MS,
    });
    const id = await waitFor(
      async () => (await stack.store.messagesTo(`+${MAGIC_NUMBERS.neverFinal}`))[0],
      'the message in the store',
      { timeoutMs: 30_000, intervalMs: 25 },
    );
    await awaited(id, started.workflowId);

    const first = await post({
      type: 'message.status.batch',
      events: [statusEvent(id, 'failed'), statusEvent(id, 'failed'), statusEvent(id, 'delivered')],
    });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ received: 3, rejected: [] });
    const result = await started.result();
    expect(result.messages).toEqual([
      expect.objectContaining({ provider_message_id: id, status: 'failed', source: 'webhook' }),
    ]);

    // Later deliveries (a duplicate, a conflict) find the workflow closed: still acknowledged, still 'failed'.
    expect((await post(statusEvent(id, 'failed'))).status).toBe(200);
    expect((await post(statusEvent(id, 'delivered'))).status).toBe(200);
    const stored = await stack.store.message(id);
    expect(stored?.final?.status).toBe('failed');
    expect(stored?.waiters.every((w) => w.releasedAt !== null)).toBe(true);
    expect(await signalsReceived(started.workflowId)).toBe(1);
  });

  it('keeps an event that arrives before its message is registered and gives it to the waiter', async () => {
    const id = `early-${randomUUID()}`;
    expect((await post(statusEvent(id, 'undelivered'))).status).toBe(200);
    expect((await post(statusEvent(id, 'undelivered'))).status).toBe(200); // duplicate
    expect((await post(statusEvent(id, 'delivered'))).status).toBe(200); // out of order: the first final state wins
    expect((await stack.store.message(id))?.final?.status).toBe('undelivered');

    const waiter = await stack.msgflow.awaitMessage(id, { waitWindowMs: LONG_WAIT_MS });
    expect(await waiter.result()).toEqual({
      providerMessageId: id,
      status: 'undelivered',
      timestamp: expect.any(String),
      source: 'webhook',
    });
    // It had the outcome from the store when it registered: no signal was needed.
    expect(await signalsReceived(waiter.workflowId)).toBe(0);
  });

  it('stores and acknowledges an event nobody waits for', async () => {
    const id = `unawaited-${randomUUID()}`;
    const response = await post(statusEvent(id, 'expired'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: 1, rejected: [] });
    const stored = await stack.store.message(id);
    expect(stored).toMatchObject({ providerMessageId: id, final: { status: 'expired' }, waiters: [] });
  });

  it('keeps an authentic malformed event for an operator and names it, recording the rest', async () => {
    const id = `half-${randomUUID()}`;
    const response = await post({
      type: 'message.status.batch',
      events: [statusEvent(id, 'delivered'), { event: 'message.delivered', provider_message_id: 'x' }],
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { received: number; rejected: Array<{ index: number }> };
    expect(body).toMatchObject({ received: 1, rejected: [{ index: 1 }] });
    expect((await stack.store.message(id))?.final?.status).toBe('delivered');
    const [latest] = (await stack.store.rejected({ limit: 1 })).rows;
    expect(latest?.event).toEqual({ event: 'message.delivered', provider_message_id: 'x' });
  });

  it('records the first 1,000 events of an oversized batch and keeps the rest as batch_too_large', async () => {
    const prefix = `big-${randomUUID()}`;
    const events = Array.from({ length: MAX_EVENTS_PER_BATCH + 3 }, (_, i) =>
      statusEvent(`${prefix}-${i}`, 'delivered'),
    );
    const response = await post({ type: 'message.status.batch', events });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { received: number; rejected: Array<{ index: number; reason: string }> };
    expect(body.received).toBe(MAX_EVENTS_PER_BATCH);
    expect(body.rejected.map((r) => r.index)).toEqual([1000, 1001, 1002]);
    expect(body.rejected.every((r) => r.reason.startsWith('batch_too_large'))).toBe(true);
    expect((await stack.store.message(`${prefix}-999`))?.final?.status).toBe('delivered');
    expect(await stack.store.message(`${prefix}-1000`)).toBeNull();
    const kept = (await stack.store.rejected({ limit: 3 })).rows;
    expect(kept.map((r) => r.reason.split(':')[0])).toEqual(['batch_too_large', 'batch_too_large', 'batch_too_large']);
    expect(kept.map((r) => (r.event as MessageStatusEvent).provider_message_id).sort()).toEqual(
      [1000, 1001, 1002].map((i) => `${prefix}-${i}`),
    );
  });

  it('rejects forged and stale deliveries and records nothing', async () => {
    const forgedId = `forged-${randomUUID()}`;
    const forged = await post(statusEvent(forgedId, 'delivered'), { secret: generateWebhookSecret() });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ code: 'bad_signature' });

    const staleId = `stale-${randomUUID()}`;
    const stale = await post(statusEvent(staleId, 'delivered'), { sentAt: Date.now() - 10 * 60 * 1000 });
    expect(stale.status).toBe(401);
    expect(await stale.json()).toMatchObject({ code: 'stale_timestamp' });

    const unsigned = await fetch(stack.ingress.webhookUrl, {
      method: 'POST',
      body: JSON.stringify(statusEvent(forgedId, 'delivered')),
    });
    expect(unsigned.status).toBe(401);
    for (const id of [forgedId, staleId]) expect(await stack.store.message(id)).toBeNull();
  });

  it('brings the events of a campaign to it in fewer signals than messages', { timeout: 120_000 }, async () => {
    const recipients = numbers(40);
    const run = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'Your parcel is on its way',
      audience: { type: 'inline', recipients },
      waitWindowMs: LONG_WAIT_MS,
    });
    const result = await run.result();
    expect(result).toMatchObject({ sent: recipients.length, counts: { delivered: recipients.length } });
    // One signal per single-event webhook request would be one per message: the relay told many at once.
    const signals = await signalsReceived(run.workflowId);
    expect(signals).toBeLessThan(recipients.length);
  });

  it('sends the events of a batch-enabled endpoint to the workflow', async () => {
    const [endpoint] = await stack.messaging.webhooks.list().toArray();
    await stack.messaging.webhooks.update(endpoint!.id, { batch: true });
    try {
      const started = await stack.msgflow.sendSms({
        recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.rejected, MAGIC_NUMBERS.expired],
        sender: 'ACME',
        message: 'batched',
        waitWindowMs: LONG_WAIT_MS,
      });
      const result = await started.result();
      expect(result.messages.map((m) => m.status).sort()).toEqual(['delivered', 'expired', 'rejected']);
      expect(result.messages.every((m) => m.source === 'webhook')).toBe(true);
    } finally {
      await stack.messaging.webhooks.update(endpoint!.id, { batch: false });
    }
  });

  it('answers 200 and stays ready while Temporal is unreachable; its relay tells the waiter once it is back', async () => {
    const { namespace, address } = inject('temporal');
    const proxy = await startTcpProxy(address);
    const connection = await Connection.connect({ address: proxy.address });
    const secret = generateWebhookSecret();
    // An ingress on the stack's store whose relay reaches Temporal only through the proxy.
    const relay = startRelay({
      store: stack.store,
      client: new Client({ connection, namespace }),
      callTimeoutMs: 1000,
      maxBackoffMs: 500,
    });
    const ingress = await startIngress({
      verifier: standardWebhooksVerifier([secret]),
      router: outcomeRouter({ store: stack.store, relay }),
      isReady: () => isReady(stack.store),
    });
    try {
      const id = `outage-${randomUUID()}`;
      const waiter = await stack.msgflow.awaitMessage(id, { waitWindowMs: LONG_WAIT_MS });
      await awaited(id, waiter.workflowId);

      await proxy.cut();
      const accepted = await post(statusEvent(id, 'delivered'), { secret, url: ingress.webhookUrl });
      expect(accepted.status).toBe(200);
      expect((await fetch(`${ingress.url}/readyz`)).status).toBe(200);
      expect((await stack.store.message(id))?.final).toMatchObject({ status: 'delivered' });

      await proxy.restore();
      // No redelivery: a relay tells the workflow from the store (this one once its connection is back, or the
      // stack's own, which shares the store, on its sweep).
      expect(await waiter.result()).toMatchObject({ providerMessageId: id, status: 'delivered', source: 'webhook' });
      expect(await signalsReceived(waiter.workflowId)).toBeGreaterThanOrEqual(1);
    } finally {
      await ingress.close();
      await relay.close();
      await connection.close();
      await proxy.close();
    }
  });

  it('answers 503 while the store is unreachable, for good and malformed events alike', async () => {
    const store = await openMessageStore({ file: ':memory:' });
    await store.close(); // every call now fails, as a store that went away does
    const secret = generateWebhookSecret();
    const ingress = await startIngress({
      verifier: standardWebhooksVerifier([secret]),
      router: outcomeRouter({ store, relay: { wake: () => {} } }),
      isReady: () => isReady(store),
    });
    try {
      for (const body of [statusEvent(`down-${randomUUID()}`, 'delivered'), { event: 'message.delivered' }]) {
        const response = await post(body, { secret, url: ingress.webhookUrl });
        expect(response.status).toBe(503);
        expect(await response.json()).toMatchObject({ code: 'store_unavailable' });
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect((await fetch(`${ingress.url}/readyz`)).status).toBe(503);
    } finally {
      await ingress.close();
    }
  });
});
