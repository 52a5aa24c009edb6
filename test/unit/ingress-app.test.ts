/**
 * The ingress's HTTP edges, with a recording router in place of the message store and Temporal (a faked
 * collaborator): what is answered, and which events and rejected events reach the router.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/api/common.js';
import type { MessageStatusEvent } from '../../src/api/events.js';
import { generateWebhookSecret, signWebhook } from '../../src/api/signature.js';
import { type RunningIngress, startIngress } from '../../src/ingress/server.js';
import { StoreUnavailableError } from '../../src/ingress/outcome-router.js';
import { standardWebhooksVerifier } from '../../src/ingress/verifier.js';

type Failure = 'store' | undefined;

function statusEvent(providerMessageId: string, status: 'delivered' | 'failed' = 'delivered'): MessageStatusEvent {
  return {
    event: `message.${status}`,
    mobile_number: '+2348012345678',
    provider_message_id: providerMessageId,
    status,
    timestamp: formatTimestamp(new Date()),
  };
}

describe('ingress app', () => {
  const secret = generateWebhookSecret();
  const routed: Array<{ events: MessageStatusEvent[]; deliveryId: string }> = [];
  const rejected: Array<{ reason: string; event: unknown }> = [];
  let failure: Failure;
  let ingress: RunningIngress;

  const signedPost = (body: string, id = 'msg_1') =>
    fetch(ingress.webhookUrl, {
      method: 'POST',
      headers: signWebhook([secret], id, Math.floor(Date.now() / 1000), body),
      body,
    });

  beforeAll(async () => {
    ingress = await startIngress({
      verifier: standardWebhooksVerifier([secret]),
      router: {
        async deliver(events, deliveryId, kept = []) {
          if (failure === 'store') throw new StoreUnavailableError('down');
          rejected.push(...kept.map(({ reason, event }) => ({ reason, event })));
          routed.push({ events, deliveryId });
        },
      },
      isReady: async () => failure === undefined,
      maxBodyBytes: 2048,
    });
  });
  afterAll(async () => {
    await ingress?.close();
  });
  beforeEach(() => {
    routed.length = 0;
    rejected.length = 0;
    failure = undefined;
  });

  it('answers health always, and readiness only while its dependencies are reachable', async () => {
    expect((await fetch(`${ingress.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${ingress.url}/readyz`)).status).toBe(200);
    failure = 'store';
    expect((await fetch(`${ingress.url}/readyz`)).status).toBe(503);
    expect((await fetch(`${ingress.url}/healthz`)).status).toBe(200);
  });

  it('routes a valid event with its delivery id and acknowledges it', async () => {
    const event = statusEvent('msg_a', 'failed');
    const response = await signedPost(JSON.stringify(event), 'msg_delivery_a');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: 1, rejected: [] });
    expect(routed).toEqual([{ events: [event], deliveryId: 'msg_delivery_a' }]);
    expect(rejected).toEqual([]);
  });

  it('refuses a body with a bad signature with 401, recording and routing nothing', async () => {
    const body = JSON.stringify(statusEvent('msg_forged'));
    const forged = await fetch(ingress.webhookUrl, {
      method: 'POST',
      headers: signWebhook([generateWebhookSecret()], 'msg_f', Math.floor(Date.now() / 1000), body),
      body,
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ code: 'bad_signature' });
    const unsigned = await fetch(ingress.webhookUrl, { method: 'POST', body: 'not even json' });
    expect(unsigned.status).toBe(401);
    expect(routed).toEqual([]);
    expect(rejected).toEqual([]);
  });

  it('routes the good events of a batch, and keeps and names the malformed one', async () => {
    const good = [statusEvent('msg_b1'), statusEvent('msg_b2', 'failed')];
    const bad = { ...statusEvent('msg_b3'), status: 'failed' }; // status does not match the event kind
    const response = await signedPost(
      JSON.stringify({ type: 'message.status.batch', events: [good[0], bad, good[1]] }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { received: number; rejected: Array<{ index: number; reason: string }> };
    expect(body.received).toBe(2);
    expect(body.rejected).toEqual([{ index: 1, reason: expect.stringContaining('status') }]);
    expect(routed.flatMap((r) => r.events)).toEqual(good);
    expect(rejected).toEqual([{ reason: body.rejected[0]!.reason, event: bad }]);
  });

  it('keeps and names an authentic body that is not JSON', async () => {
    const response = await signedPost('{"event": "message.deliv');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      received: 0,
      rejected: [{ index: 0, reason: 'the body is not valid JSON' }],
    });
    expect(rejected).toEqual([{ reason: 'the body is not valid JSON', event: '{"event": "message.deliv' }]);
    expect(routed.flatMap((r) => r.events)).toEqual([]);
  });

  it('answers 503 store_unavailable with Retry-After when the store cannot record the events', async () => {
    failure = 'store';
    const response = await signedPost(JSON.stringify(statusEvent('msg_c')));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'store_unavailable' });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refuses an oversized body with 413 and unknown paths with a JSON 404', async () => {
    const response = await signedPost('x'.repeat(4096));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'payload_too_large' });
    const unknown = await fetch(`${ingress.url}/elsewhere`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'not_found' });
    expect(routed).toEqual([]);
    expect(rejected).toEqual([]);
  });
});
