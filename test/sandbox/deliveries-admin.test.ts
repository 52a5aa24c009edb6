/**
 * Recorded webhook delivery attempts and the test controls, through the admin API (SandboxAdmin) against a
 * real sandbox and a real receiver: attempts with status, latency and the start of the answer; redeliver;
 * paused deliveries; forced outcomes; reset; token prefixes and last use; one-time console links.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RESPONSE_START_BYTES } from '../../src/sandbox/dispatcher.js';
import { SandboxAdminError } from '../../src/sandbox/index.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type ApiCaller, apiFor, eventually, sms } from './helpers.js';
import { type Receiver, startReceiver } from './receiver.js';

describe('webhook deliveries and test controls (admin API)', () => {
  let t: TestSandbox;
  let receivers: Receiver[] = [];
  beforeAll(async () => {
    t = await startTestSandbox();
  });
  afterEach(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    receivers = [];
  });
  afterAll(() => t.close());

  async function setup(batch = false) {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const account = await t.newAccount();
    const api: ApiCaller = apiFor(t.sandbox.baseUrl, account.token);
    expect((await api('POST', '/webhooks', { url: receiver.url, batch })).status).toBe(201);
    return { receiver, account, api };
  }

  async function send(api: ApiCaller, to: string): Promise<string> {
    const sent = await api('POST', '/sms/send', sms([to]));
    expect(sent.status).toBe(202);
    return sent.body.data.messages[0].provider_message_id as string;
  }

  it("records every attempt (status, latency, the answer's start) and the next retry, and redelivers", async () => {
    const { receiver, account, api } = await setup();
    receiver.answer = () => ({ status: 500 });
    const messageId = await send(api, '2348012345671');
    const [failed] = await eventually(
      () => t.admin.deliveries(account.accountId, { messageId }),
      (list) => list[0]?.state === 'failed',
    );
    expect(failed!.message_ids).toEqual([messageId]);
    expect(failed!.event_types).toEqual(['message.delivered']);
    expect(failed!.attempts.map((a) => [a.attempt, a.status, a.error])).toEqual(
      [1, 2, 3, 4, 5].map((n) => [n, 500, 'HTTP 500']),
    );
    expect(failed!.next_attempt_at).toBeNull();
    expect(receiver.received).toHaveLength(5);

    receiver.answer = () => ({ status: 200 });
    const queued = await t.admin.redeliver(failed!.id);
    expect(queued.state).toBe('pending');
    const delivered = await eventually(
      () => t.admin.delivery(failed!.id),
      (d) => d.state === 'delivered',
    );
    expect(delivered.attempts.at(-1)).toMatchObject({ attempt: 6, status: 200, error: null });
    expect(receiver.received.at(-1)!.webhookId).toBe(failed!.id);
    await expect(t.admin.delivery('evt_missing')).rejects.toMatchObject({ status: 404 });
  });

  it('keeps the start of the answer, cut at RESPONSE_START_BYTES, and shows the next retry of a pending one', async () => {
    const { receiver, account, api } = await setup();
    // The fast test schedule retries within ms; pause after the first failure to see a pending one.
    receiver.answer = () => ({ status: 503, headers: { 'retry-after': '3600' } });
    const messageId = await send(api, '2348012345672');
    const [pending] = await eventually(
      () => t.admin.deliveries(account.accountId, { messageId }),
      (list) => (list[0]?.attempts.length ?? 0) >= 1,
    );
    expect(pending!.state).toBe('pending');
    expect(Date.parse(pending!.next_attempt_at!)).toBeGreaterThan(Date.now() + 3_000_000);
    expect(pending!.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(0);
    expect(RESPONSE_START_BYTES).toBe(512);
  });

  it('holds deliveries while paused and sends them on resume', async () => {
    const { receiver, account, api } = await setup(true);
    await t.admin.setWebhooksPaused(account.accountId, true);
    const messageId = await send(api, '2348012345673');
    const [held] = await eventually(
      () => t.admin.deliveries(account.accountId, { messageId }),
      (list) => list.length === 1,
    );
    expect(held!.event_types).toEqual(['message.status.batch', 'message.delivered']);
    // The delivery exists and is due; while paused, nothing reaches the receiver.
    await new Promise((r) => setTimeout(r, 200));
    expect((await t.admin.delivery(held!.id)).attempts).toHaveLength(0);
    expect(receiver.received).toHaveLength(0);

    await t.admin.setWebhooksPaused(account.accountId, false);
    await eventually(
      () => t.admin.delivery(held!.id),
      (d) => d.state === 'delivered',
    );
    expect(receiver.received).toHaveLength(1);
  });

  it("forces a number's outcome and its delay, and clears it", async () => {
    const { api } = await setup();
    const to = '2348012345674';
    expect(await t.admin.setOutcome(to, 'undelivered', 0)).toEqual({
      mobile_number: `+${to}`,
      outcome: 'undelivered',
      final_delay_ms: 0,
    });
    expect(await t.admin.outcomes()).toContainEqual({
      mobile_number: `+${to}`,
      outcome: 'undelivered',
      final_delay_ms: 0,
    });
    const id = await send(api, to);
    await eventually(
      () => api('GET', `/messages/${id}`),
      (r) => r.body.data.status === 'undelivered',
    );
    await t.admin.clearOutcome(to);
    const next = await send(api, to);
    await eventually(
      () => api('GET', `/messages/${next}`),
      (r) => r.body.data.status === 'delivered',
    );
    await expect(t.admin.clearOutcome(to)).rejects.toBeInstanceOf(SandboxAdminError);
    await expect(t.admin.setOutcome('123', 'failed')).rejects.toMatchObject({ status: 422 });
  });

  it("resets an account's traffic and keeps its tokens and wallet", async () => {
    const { account, api } = await setup();
    const id = await send(api, '2348012345675');
    await eventually(
      () => t.admin.deliveries(account.accountId),
      (list) => list[0]?.state === 'delivered',
    );
    const balance = (await api('GET', '/balance')).body.data.balance as number;
    await t.admin.resetAccount(account.accountId);
    expect((await api('GET', `/messages/${id}`)).status).toBe(404);
    expect((await api('GET', '/messages')).body.data).toEqual([]);
    expect(await t.admin.deliveries(account.accountId)).toEqual([]);
    expect((await api('GET', '/balance')).body.data.balance).toBe(balance);
  });

  it('lists tokens by prefix with their last use, never their secrets', async () => {
    const account = await t.newAccount();
    const before = await t.admin.tokens(account.accountId);
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({ id: account.tokenId, prefix: account.token.slice(0, 15), last_used_at: null });
    expect(JSON.stringify(before)).not.toContain(account.token);
    expect((await apiFor(t.sandbox.baseUrl, account.token)('GET', '/balance')).status).toBe(200);
    const [used] = await t.admin.tokens(account.accountId);
    expect(used!.last_used_at).not.toBeNull();
    await t.admin.revokeToken(account.tokenId);
    expect((await t.admin.tokens(account.accountId))[0]!.revoked_at).not.toBeNull();
  });

  it('issues one-time console sign-in links that never carry the admin token', async () => {
    const link = await t.admin.consoleSignInLink();
    expect(link).toMatch(/\/dashboard\/sign-in\/link\?code=[\w-]+$/);
    expect(link).not.toContain(t.sandbox.adminToken);
    const first = await fetch(link, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(401);
  });
});
