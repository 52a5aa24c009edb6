/** The ingress's HTTP edges, with a recording signaler in place of Temporal (a faked collaborator). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/api/common.js';
import type { MessageStatusEvent } from '../../src/api/events.js';
import { generateWebhookSecret, signWebhook } from '../../src/api/signature.js';
import { type RunningIngress, startIngress } from '../../src/ingress/server.js';
import { TemporalUnavailableError } from '../../src/ingress/signaler.js';
import { standardWebhooksVerifier } from '../../src/ingress/verifier.js';

describe('ingress app', () => {
  const secret = generateWebhookSecret();
  const delivered: MessageStatusEvent[] = [];
  let temporalUp = true;
  let ingress: RunningIngress;

  const signedPost = (body: string) =>
    fetch(ingress.webhookUrl, {
      method: 'POST',
      headers: signWebhook([secret], 'msg_1', Math.floor(Date.now() / 1000), body),
      body,
    });

  beforeAll(async () => {
    ingress = await startIngress({
      verifier: standardWebhooksVerifier([secret]),
      signaler: {
        async deliver(events) {
          if (!temporalUp) throw new TemporalUnavailableError('down');
          delivered.push(...events);
        },
      },
      isReady: async () => temporalUp,
      maxBodyBytes: 2048,
    });
  });
  afterAll(async () => {
    await ingress?.close();
  });

  it('answers health always, and readiness only while Temporal is reachable', async () => {
    expect((await fetch(`${ingress.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${ingress.url}/readyz`)).status).toBe(200);
    temporalUp = false;
    try {
      expect((await fetch(`${ingress.url}/readyz`)).status).toBe(503);
      expect((await fetch(`${ingress.url}/healthz`)).status).toBe(200);
    } finally {
      temporalUp = true;
    }
  });

  it('signals a valid event and acknowledges only then', async () => {
    const event = {
      event: 'message.failed',
      mobile_number: '+2348012345678',
      provider_message_id: 'msg_a',
      status: 'failed',
      timestamp: formatTimestamp(new Date()),
    };
    const response = await signedPost(JSON.stringify(event));
    expect(response.status).toBe(200);
    expect(delivered.at(-1)).toEqual(event);
  });

  it('answers 503 with Retry-After when the signals cannot be delivered', async () => {
    temporalUp = false;
    try {
      const event = {
        event: 'message.delivered',
        mobile_number: '+2348012345678',
        provider_message_id: 'msg_b',
        status: 'delivered',
        timestamp: formatTimestamp(new Date()),
      };
      const response = await signedPost(JSON.stringify(event));
      expect(response.status).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      temporalUp = true;
    }
  });

  it('refuses an oversized body with 413 and unknown paths with a JSON 404', async () => {
    const before = delivered.length;
    const response = await signedPost('x'.repeat(4096));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'payload_too_large' });
    const unknown = await fetch(`${ingress.url}/elsewhere`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'not_found' });
    expect(delivered.length).toBe(before);
  });
});
