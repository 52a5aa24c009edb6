/**
 * Spec "Events" 1–6 against a real receiving server: registration, single and batch bodies, subscriptions,
 * signatures (checked with verifyWebhook and the official standardwebhooks package), retries with a stable
 * webhook-id, Retry-After, timeouts, connection errors, and chaos duplicates.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BatchStatusEvent, MessageStatusEvent } from '../../src/api/events.js';
import { paginated } from '../../src/api/common.js';
import { verifyWebhook } from '../../src/api/signature.js';
import { WebhookEndpoint, WebhookRegistration } from '../../src/api/webhooks.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type ApiCaller, apiFor, eventually, manualClock, sms } from './helpers.js';
import { closedPort, type Delivery, type Receiver, startReceiver } from './receiver.js';

const settle = (ms = 150) => new Promise((resolve) => setTimeout(resolve, ms));

/** Verifies a delivery with both verifiers and returns the payload the reference oracle decoded. */
function verifyBoth(delivery: Delivery, secret: string): unknown {
  const headers = {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  };
  expect(verifyWebhook(headers, delivery.body, { secrets: [secret] })).toEqual({ ok: true, id: headers['webhook-id'] });
  expect(verifyWebhook(headers, `${delivery.body} `, { secrets: [secret] }).ok).toBe(false);
  return new Webhook(secret).verify(delivery.body, headers);
}

const ALL_FINAL = [
  '12025550100',
  MAGIC_NUMBERS.undelivered,
  MAGIC_NUMBERS.failed,
  MAGIC_NUMBERS.rejected,
  MAGIC_NUMBERS.expired,
];

describe('webhooks', () => {
  let t: TestSandbox;
  let receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };
  beforeAll(async () => {
    t = await startTestSandbox();
  });
  afterEach(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    receivers = [];
  });
  afterAll(() => t.close());

  const account = async (): Promise<ApiCaller> => apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);

  it('registration returns the secret once; endpoints can be listed, read, updated and deleted', async () => {
    const api = await account();
    const created = await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/a' });
    expect(created.status).toBe(201);
    const registration = WebhookRegistration.parse(created.body.data);
    expect(registration.events).toEqual(['*']);
    expect(registration.batch).toBe(false);
    const fetched = await api('GET', `/webhooks/${registration.id}`);
    expect(WebhookEndpoint.parse(fetched.body.data)).not.toHaveProperty('secret');
    const list = paginated(WebhookEndpoint).parse((await api('GET', '/webhooks')).body);
    expect(list.data.map((w) => w.id)).toEqual([registration.id]);
    expect(list.data[0]).not.toHaveProperty('secret');

    const updated = await api('PATCH', `/webhooks/${registration.id}`, { events: ['message.failed'], batch: true });
    expect(updated.body.data).toMatchObject({ events: ['message.failed'], batch: true, url: 'http://127.0.0.1:9/a' });
    expect((await api('PATCH', `/webhooks/${registration.id}`, {})).status).toBe(422);
    expect((await api('DELETE', `/webhooks/${registration.id}`)).status).toBe(204);
    expect((await api('GET', `/webhooks/${registration.id}`)).status).toBe(404);
    expect((await api('POST', '/webhooks', { url: 'ftp://example.com/x' })).status).toBe(422);
    expect((await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/a', events: ['message.sent'] })).status).toBe(
      422,
    );
  });

  it('rules 1, 2, 3, 6: one signed POST per final state, with the status event payload', async () => {
    const api = await account();
    const r = await receiver();
    const { secret } = (await api('POST', '/webhooks', { url: r.url })).body.data;
    const sent = (await api('POST', '/sms/send', sms([...ALL_FINAL, MAGIC_NUMBERS.neverFinal]))).body.data;
    const idByNumber = new Map<string, string>(
      sent.messages.map((m: { mobile_number: string; provider_message_id: string }) => [
        m.mobile_number,
        m.provider_message_id,
      ]),
    );
    await eventually(
      async () => r.received.length,
      (n) => n >= ALL_FINAL.length,
    );
    await settle();
    expect(r.received).toHaveLength(ALL_FINAL.length); // nothing for the number that never reaches a final state
    const statuses = [];
    for (const delivery of r.received) {
      expect(delivery.method).toBe('POST');
      expect(delivery.headers['content-type']).toBe('application/json');
      const event = MessageStatusEvent.parse(delivery.json);
      expect(verifyBoth(delivery, secret)).toEqual(delivery.json);
      expect(event.event).toBe(`message.${event.status}`);
      expect(event.mobile_number).toMatch(/^\+\d+$/);
      expect(event.timestamp).toMatch(/\+00:00$/);
      expect(event.provider_message_id).toBe(idByNumber.get(event.mobile_number));
      statuses.push(event.status);
    }
    expect(statuses.sort()).toEqual(['delivered', 'expired', 'failed', 'rejected', 'undelivered']);
    expect(new Set(r.received.map((d) => d.webhookId)).size).toBe(ALL_FINAL.length);
  });

  it('rule 4: a batch-enabled endpoint receives message.status.batch bodies of full event payloads', async () => {
    const api = await account();
    const plain = await receiver();
    const batched = await receiver();
    await api('POST', '/webhooks', { url: plain.url });
    const { secret } = (await api('POST', '/webhooks', { url: batched.url, batch: true })).body.data;
    await api('POST', '/sms/send', sms(ALL_FINAL));
    await eventually(
      async () => plain.received.length,
      (n) => n === ALL_FINAL.length,
    );
    const events = await eventually(
      async () => batched.received.flatMap((d) => d.json.events),
      (all) => all.length === ALL_FINAL.length,
    );
    for (const delivery of batched.received) {
      const body = BatchStatusEvent.parse(delivery.json);
      expect(body.type).toBe('message.status.batch');
      expect(verifyBoth(delivery, secret)).toEqual(delivery.json);
    }
    expect(batched.received.length).toBeLessThan(ALL_FINAL.length); // same-tick events were gathered
    expect(events.map((e) => e.provider_message_id).sort()).toEqual(
      plain.received.map((d) => d.json.provider_message_id).sort(),
    );
  });

  it('rule 5: events filters the subscription; * and omitted mean all', async () => {
    const api = await account();
    const some = await receiver();
    const star = await receiver();
    await api('POST', '/webhooks', { url: some.url, events: ['message.failed', 'message.expired'] });
    await api('POST', '/webhooks', { url: star.url, events: ['*'] });
    await api('POST', '/sms/send', sms(ALL_FINAL));
    await eventually(
      async () => star.received.length,
      (n) => n === ALL_FINAL.length,
    );
    await eventually(
      async () => some.received.length,
      (n) => n === 2,
    );
    await settle();
    expect(some.received.map((d) => d.json.event).sort()).toEqual(['message.expired', 'message.failed']);
  });

  it('retries failed deliveries with the same webhook-id, each attempt freshly signed', async () => {
    const api = await account();
    const r = await receiver();
    r.answer = (_d, n) => ({ status: n <= 2 ? 500 : 204 });
    const { secret } = (await api('POST', '/webhooks', { url: r.url })).body.data;
    await api('POST', '/sms/send', sms(['12025550100']));
    await eventually(
      async () => r.received.length,
      (n) => n === 3,
    );
    await settle();
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((d) => d.webhookId)).size).toBe(1);
    for (const delivery of r.received) verifyBoth(delivery, secret);
  });

  it('gives up when the retry schedule runs out', async () => {
    const api = await account();
    const r = await receiver();
    r.answer = () => ({ status: 500 });
    await api('POST', '/webhooks', { url: r.url });
    await api('POST', '/sms/send', sms(['12025550100']));
    const attempts = 1 + 4; // first attempt + FAST_TIMINGS.webhooks.retryScheduleMs.length
    await eventually(
      async () => r.received.length,
      (n) => n >= attempts,
    );
    await settle(600); // longer than the last scheduled delay
    expect(r.received).toHaveLength(attempts);
  });

  it('stops delivering to a deleted endpoint', async () => {
    const api = await account();
    const r = await receiver();
    const { id } = (await api('POST', '/webhooks', { url: r.url })).body.data;
    await api('POST', '/sms/send', sms(['12025550100']));
    await eventually(
      async () => r.received.length,
      (n) => n === 1,
    );
    await api('DELETE', `/webhooks/${id}`);
    const sent = (await api('POST', '/sms/send', sms(['12025550100']))).body.data;
    await eventually(
      () => api('GET', `/messages/${sent.messages[0].provider_message_id}`),
      (m) => m.body.data.status === 'delivered',
    );
    await settle();
    expect(r.received).toHaveLength(1);
  });
});

describe('webhooks: failures on the wire', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({ webhooks: { timeoutMs: 200, retryScheduleMs: [100, 200, 400, 800, 1600] } });
  });
  afterAll(() => t.close());

  it('a delivery that times out is retried', async () => {
    const api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    const r = await startReceiver();
    try {
      r.answer = (_d, n) => ({ status: 200, delayMs: n === 1 ? 1_000 : 0 });
      await api('POST', '/webhooks', { url: r.url });
      await api('POST', '/sms/send', sms(['12025550100']));
      await eventually(
        async () => r.received.length,
        (n) => n === 2,
      );
      expect(r.received[1]!.webhookId).toBe(r.received[0]!.webhookId);
    } finally {
      await r.close();
    }
  });

  it('a refused connection is retried until the endpoint comes up', async () => {
    const api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    const port = await closedPort();
    await api('POST', '/webhooks', { url: `http://127.0.0.1:${port}/hooks` });
    const sent = (await api('POST', '/sms/send', sms(['12025550100']))).body.data;
    await eventually(
      () => api('GET', `/messages/${sent.messages[0].provider_message_id}`),
      (m) => m.body.data.status === 'delivered',
    );
    await settle(50); // the first attempt has met a closed port by now
    const r = await startReceiver(port);
    try {
      await eventually(
        async () => r.received.length,
        (n) => n === 1,
      );
      expect(r.received[0]!.json.provider_message_id).toBe(sent.messages[0].provider_message_id);
    } finally {
      await r.close();
    }
  });
});

describe('webhooks: Retry-After', () => {
  const clock = manualClock(Date.now());
  const dir = mkdtempSync(join(tmpdir(), 'msgflow-retry-after-'));
  const dbFile = join(dir, 'sandbox.db');
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({
      db: dbFile,
      now: clock.now,
      carrier: { submitMs: 0, finalMs: 0 },
      webhooks: { retryScheduleMs: [100] },
    });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /** Attempts the sandbox has recorded, read from its database file: the clock may only move once the answer is processed. */
  const recordedAttempts = async () => {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT COALESCE(SUM(attempts), 0) AS n FROM deliveries').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('a 503 or 429 with a longer Retry-After postpones the retry to it', async () => {
    const api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    const r = await startReceiver();
    try {
      r.answer = (_d, n) => (n === 1 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 });
      await api('POST', '/webhooks', { url: r.url });
      await api('POST', '/sms/send', sms(['12025550100']));
      await eventually(
        async () => r.received.length,
        (n) => n === 1,
      );
      await eventually(recordedAttempts, (n) => n === 1);
      clock.advance(1_000); // past the 100 ms schedule, short of Retry-After
      await settle();
      expect(r.received).toHaveLength(1);
      clock.advance(1_000);
      await eventually(
        async () => r.received.length,
        (n) => n === 2,
      );
    } finally {
      await r.close();
    }
  });
});

describe('webhooks: chaos', () => {
  it('duplicateProbability 1 delivers everything twice under one webhook-id, and batch bodies hold at most batchMax events', async () => {
    const t = await startTestSandbox({ webhooks: { batchMax: 2, chaos: { duplicateProbability: 1 } } });
    const r = await startReceiver();
    const batched = await startReceiver();
    try {
      const api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
      await api('POST', '/webhooks', { url: r.url });
      await api('POST', '/webhooks', { url: batched.url, batch: true });
      await api('POST', '/sms/send', sms(ALL_FINAL));
      await eventually(
        async () => r.received.length,
        (n) => n === 2 * ALL_FINAL.length,
      );
      const copies = new Map<string, number>();
      for (const d of r.received) copies.set(d.webhookId, (copies.get(d.webhookId) ?? 0) + 1);
      expect([...copies.values()]).toEqual(Array(ALL_FINAL.length).fill(2));
      await eventually(
        async () => batched.received.flatMap((d) => d.json.events).length,
        (n) => n === 2 * ALL_FINAL.length,
      );
      expect(batched.received.every((d) => d.json.events.length <= 2)).toBe(true);
    } finally {
      await r.close();
      await batched.close();
      await t.close();
    }
  });

  it('contradictProbability 1 follows each receipt with a contradicting one, and the messages keep their first state', async () => {
    const t = await startTestSandbox({ webhooks: { chaos: { contradictProbability: 1 } } });
    const r = await startReceiver();
    try {
      const api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
      await api('POST', '/webhooks', { url: r.url });
      const sent = (await api('POST', '/sms/send', sms(ALL_FINAL))).body.data;
      await eventually(
        async () => r.received.length,
        (n) => n === 2 * ALL_FINAL.length,
      );
      await settle();
      expect(r.received).toHaveLength(2 * ALL_FINAL.length); // a contradiction is not contradicted in turn
      for (const { provider_message_id: id } of sent.messages) {
        const receipts = r.received
          .map((d) => MessageStatusEvent.parse(d.json))
          .filter((e) => e.provider_message_id === id);
        const first = (await api('GET', `/messages/${id}`)).body.data.status;
        expect(receipts[0]!.status).toBe(first);
        expect(receipts[1]!.status).not.toBe(first);
        expect(Date.parse(receipts[1]!.timestamp)).toBeGreaterThan(Date.parse(receipts[0]!.timestamp));
      }
      expect(new Set(r.received.map((d) => d.webhookId)).size).toBe(r.received.length);
    } finally {
      await r.close();
      await t.close();
    }
  });

  it('a receipt drawn to be contradicted while its receiver fails is contradicted once it gets through, after contradicting is off', async () => {
    const chaos = { contradictProbability: 1 };
    const t = await startTestSandbox({ webhooks: { retryScheduleMs: [300, 300, 300], chaos } });
    const r = await startReceiver();
    r.answer = () => ({ status: 503 });
    try {
      const api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
      await api('POST', '/webhooks', { url: r.url });
      await api('POST', '/sms/send', sms(['12025550100']));
      await eventually(
        async () => r.received.length,
        (n) => n >= 1,
      );
      chaos.contradictProbability = 0;
      r.answer = () => ({ status: 200 });
      await eventually(
        async () => new Set(r.received.map((d) => d.webhookId)).size,
        (ids) => ids === 2,
      );
      const statuses = [
        ...new Map(r.received.map((d) => [d.webhookId, MessageStatusEvent.parse(d.json).status])).values(),
      ];
      expect(statuses[0]).toBe('delivered');
      expect(statuses[1]).not.toBe('delivered');
    } finally {
      await r.close();
      await t.close();
    }
  });
});
