/**
 * The client against the real sandbox over HTTP: every method, every error class, retries that honour
 * Retry-After, idempotent replays across client instances, pagination under inserts, input validation and
 * log redaction. `strictResponses` is on, so any drift between the sandbox's answers and the contract fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/api/scopes.js';
import {
  AuthenticationError,
  IdempotencyConflictError,
  InsufficientBalanceError,
  InvalidInputError,
  IpNotAllowedError,
  type LogEntry,
  MessagingApiError,
  MessagingClient,
  type MessagingClientOptions,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  SpendCapExceededError,
  ValidationError,
} from '../../src/client/index.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';

const ALICE = '2348012345678';
const BOB = '2348012345679';

let env: TestSandbox;

beforeAll(async () => {
  env = await startTestSandbox();
});

afterAll(async () => {
  await env?.close();
});

function clientFor(token: string, options: Partial<MessagingClientOptions> = {}): MessagingClient {
  return new MessagingClient({ baseUrl: env.sandbox.baseUrl, token, strictResponses: true, ...options });
}

async function accountClient(
  input: { balance?: number; scopes?: Scope[]; ratePerMinute?: number } = {},
  options: Partial<MessagingClientOptions> = {},
) {
  const account = await env.newAccount({ ratePerMinute: 10_000, ...input });
  return { ...account, client: clientFor(account.token, options) };
}

/** A fetch that passes everything to the platform's fetch and records when each exchange happened. */
function observedFetch() {
  const exchanges: { sentAt: number; answeredAt: number; status: number; retryAfter: string | null }[] = [];
  const impl: typeof fetch = async (input, init) => {
    const sentAt = Date.now();
    const response = await fetch(input, init);
    exchanges.push({
      sentAt,
      answeredAt: Date.now(),
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
    });
    return response;
  };
  return { fetch: impl, exchanges };
}

describe('every method', () => {
  it('sends SMS and reads it back through messages and campaigns', async () => {
    const { client } = await accountClient();
    const sent = await client.sms.send({
      recipients: [ALICE, BOB],
      sender: 'ACME',
      message: 'Hello from the client test',
    });
    expect(sent.status).toBe('queued');
    expect(sent.messages.map((m) => m.mobile_number)).toEqual([`+${ALICE}`, `+${BOB}`]);
    expect(sent.lastResponse).toMatchObject({ status: 202, replayed: false });
    expect(sent.lastResponse.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent.lastResponse.rateLimit?.limit).toBe(10_000);
    expect(client.rateLimit?.remaining).toBe(sent.lastResponse.rateLimit?.remaining);

    const [first] = sent.messages;
    const message = await client.messages.get(first!.provider_message_id);
    expect(message).toMatchObject({
      id: first!.provider_message_id,
      campaign_id: sent.campaign_id,
      mobile_number: `+${ALICE}`,
    });
    const listed = await client.messages.list().toArray();
    expect(listed.map((m) => m.id).sort()).toEqual(sent.messages.map((m) => m.provider_message_id).sort());

    const campaign = await client.campaigns.get(sent.campaign_id);
    expect(campaign).toMatchObject({ id: sent.campaign_id, recipients: 2, cost: sent.cost });
    expect((await client.campaigns.list().toArray()).map((c) => c.id)).toEqual([sent.campaign_id]);
  });

  it('sends and verifies an OTP', async () => {
    const { client } = await accountClient();
    const otp = await client.otp.send({ recipient: BOB, length: 6 });
    expect(otp).toMatchObject({ status: 'pending', mobile_number: `+${BOB}` });
    expect(otp.lastResponse.replayed).toBe(false);
    const [delivered] = await env.admin.inbox(BOB);
    const code = /\d{6}/.exec(delivered!.text)![0];
    const wrong = code === '000000' ? '111111' : '000000';

    const miss = await client.otp.verify({ otp_id: otp.otp_id, code: wrong });
    expect(miss.status).toBe('invalid');
    const hit = await client.otp.verify({ otp_id: otp.otp_id, code });
    expect(hit.status).toBe('verified');
  });

  it('places and fetches a voice call', async () => {
    const { client } = await accountClient();
    const call = await client.voice.send({ recipient: ALICE, message: 'Your appointment is at nine' });
    expect(call.lastResponse.idempotencyKey).toBeDefined();
    const fetched = await client.voice.get(call.id);
    expect(fetched).toMatchObject({ id: call.id, mobile_number: `+${ALICE}` });
  });

  it('creates, lists and fetches lookups, and verifies an email address', async () => {
    const { client } = await accountClient();
    const lookup = await client.lookups.create({ number: `+${ALICE}` });
    expect(lookup).toMatchObject({ valid: true, e164: `+${ALICE}` });
    expect(await client.lookups.get(lookup.id)).toMatchObject({ id: lookup.id });
    expect((await client.lookups.list().toArray()).map((l) => l.id)).toEqual([lookup.id]);

    const email = await client.email.verify({ email: 'someone@mailinator.com' });
    expect(email).toMatchObject({ email: 'someone@mailinator.com', disposable: true });
  });

  it('reads balance and pricing, consistent with what was charged', async () => {
    const { client } = await accountClient({ balance: 1000 });
    const pricing = await client.pricing.get();
    await client.lookups.create({ number: `+${ALICE}` });
    const balance = await client.balance.get();
    expect(balance).toMatchObject({
      balance: 1000 - pricing.prices.lookup,
      currency: pricing.currency,
      spend_cap: null,
    });
  });

  it('manages webhook endpoints', async () => {
    const { client } = await accountClient();
    const created = await client.webhooks.create({ url: 'http://127.0.0.1:9/hooks', events: ['message.delivered'] });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.lastResponse.status).toBe(201);
    expect(await client.webhooks.get(created.id)).toMatchObject({
      id: created.id,
      events: ['message.delivered'],
      batch: false,
    });
    const updated = await client.webhooks.update(created.id, { batch: true });
    expect(updated.batch).toBe(true);
    expect((await client.webhooks.list().toArray()).map((w) => w.id)).toEqual([created.id]);
    const deleted = await client.webhooks.delete(created.id);
    expect(deleted).toEqual({ id: created.id, deleted: true });
    await expect(client.webhooks.get(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('errors', () => {
  const sms = { recipients: [ALICE], sender: 'ACME', message: 'Error path' };

  it('401: a bad or revoked token is an AuthenticationError', async () => {
    const bad = clientFor('not-a-real-token');
    const error = await bad.balance.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });

    const { client, tokenId } = await accountClient();
    await env.admin.revokeToken(tokenId);
    await expect(client.balance.get()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('402: a wallet that cannot pay is an InsufficientBalanceError', async () => {
    const { client } = await accountClient({ balance: 0 });
    const error = await client.sms.send(sms).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientBalanceError);
    expect(error).toMatchObject({ status: 402, code: 'insufficient_balance' });
  });

  it('403: a missing scope, the IP allowlist and the spend cap are told apart', async () => {
    const scoped = await accountClient({ scopes: ['balance'] });
    const scopeError = await scoped.client.sms.send(sms).catch((e: unknown) => e);
    expect(scopeError).toBeInstanceOf(PermissionDeniedError);
    expect(scopeError).not.toBeInstanceOf(IpNotAllowedError);
    expect(scopeError).not.toBeInstanceOf(SpendCapExceededError);
    expect(scopeError).toMatchObject({ status: 403, code: 'insufficient_scope' });

    const walled = await accountClient();
    await env.admin.setIpAllowlist(walled.accountId, ['203.0.113.7']);
    const ipError = await walled.client.balance.get().catch((e: unknown) => e);
    expect(ipError).toBeInstanceOf(IpNotAllowedError);
    expect(ipError).toMatchObject({ status: 403, code: 'ip_not_allowed' });

    const capped = await accountClient();
    await env.admin.setSpendCap(capped.accountId, 1);
    const capError = await capped.client.sms.send(sms).catch((e: unknown) => e);
    expect(capError).toBeInstanceOf(SpendCapExceededError);
    expect(capError).toMatchObject({ status: 403, code: 'spend_cap_exceeded' });
  });

  it("404: another account's record is a NotFoundError", async () => {
    const owner = await accountClient();
    const stranger = await accountClient();
    const sent = await owner.client.sms.send(sms);
    const id = sent.messages[0]!.provider_message_id;
    await expect(owner.client.messages.get(id)).resolves.toMatchObject({ id });
    const error = await stranger.client.messages.get(id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('409: a duplicate while the first is in progress is an IdempotencyConflictError; a retrying client gets the replay', async () => {
    // A slow send holds its key for sendLatencyMs, so the duplicates below surely meet it in progress.
    const slow = await startTestSandbox({ sendLatencyMs: 1500 });
    try {
      const account = await slow.newAccount();
      const make = (options: Partial<MessagingClientOptions>) =>
        new MessagingClient({ baseUrl: slow.sandbox.baseUrl, token: account.token, strictResponses: true, ...options });
      const first = make({}).sms.send(sms, { idempotencyKey: 'held' });
      await new Promise((resolve) => setTimeout(resolve, 400));
      const retrying = make({ maxRetries: 4 }).sms.send(sms, { idempotencyKey: 'held' });
      const error = await make({ maxRetries: 0 })
        .sms.send(sms, { idempotencyKey: 'held' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IdempotencyConflictError);
      expect(error).toMatchObject({ status: 409, code: 'idempotency_in_progress' });

      const original = await first;
      const replay = await retrying;
      expect(original.lastResponse.replayed).toBe(false);
      expect(replay.lastResponse.replayed).toBe(true);
      expect(replay.campaign_id).toBe(original.campaign_id);
    } finally {
      await slow.close();
    }
  });

  it('422: the provider rejects content with a ValidationError listing the fields', async () => {
    const { client } = await accountClient();
    const error = await client.sms.send({ ...sms, sender: 'NOTAPPROVED' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 422, code: 'sender_not_approved' });
    expect((error as ValidationError).details.map((d) => d.path)).toContain('sender');

    await client.sms.send(sms, { idempotencyKey: 'reused-key' });
    const reused = await client.sms
      .send({ ...sms, message: 'A different text' }, { idempotencyKey: 'reused-key' })
      .catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(ValidationError);
    expect(reused).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('429: over the limit is a RateLimitError with retryAfterMs and rate-limit state', async () => {
    const { client } = await accountClient({ ratePerMinute: 1 }, { maxRetries: 0 });
    await client.balance.get();
    const error = await client.balance.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((error as RateLimitError).retryAfterMs).toBeGreaterThan(0);
    expect(client.rateLimit).toMatchObject({ limit: 1, remaining: 0 });
  });

  it('429: a Retry-After beyond maxRetryAfterMs is handed back, not waited', async () => {
    const observed = observedFetch();
    const { client } = await accountClient(
      { ratePerMinute: 1 },
      { fetch: observed.fetch, maxRetryAfterMs: 1000, maxRetries: 3 },
    );
    await client.balance.get();
    const error = await client.balance.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBeGreaterThan(1000);
    expect(observed.exchanges).toHaveLength(2);
  });
});

describe('retry after 429', () => {
  it('waits at least Retry-After, then succeeds', async () => {
    // The sandbox's clock is moved to the end of the rate-limit window, so Retry-After is short.
    let offsetMs = 0;
    const clocked = await startTestSandbox({ now: () => Date.now() + offsetMs });
    try {
      const account = await clocked.newAccount({ ratePerMinute: 1 });
      const observed = observedFetch();
      const client = new MessagingClient({
        baseUrl: clocked.sandbox.baseUrl,
        token: account.token,
        fetch: observed.fetch,
        maxRetries: 1,
        maxRetryAfterMs: 120_000,
      });
      await client.balance.get();
      offsetMs = 59_000;
      const balance = await client.balance.get();
      expect(balance.lastResponse.status).toBe(200);

      const [, limited, retried] = observed.exchanges;
      expect(limited?.status).toBe(429);
      expect(retried?.status).toBe(200);
      const retryAfterMs = Number(limited!.retryAfter) * 1000;
      expect(retryAfterMs).toBeGreaterThan(0);
      expect(retried!.sentAt - limited!.answeredAt).toBeGreaterThanOrEqual(retryAfterMs);
    } finally {
      await clocked.close();
    }
  });
});

describe('idempotency across client instances', () => {
  it('a crash-style retry with the same key replays instead of charging twice', async () => {
    const account = await env.newAccount({ balance: 10_000 });
    const request = { recipients: [ALICE, BOB], sender: 'ACME', message: 'Charged exactly once' };
    const key = `order-${Date.now()}`;

    const beforeCrash = clientFor(account.token);
    const original = await beforeCrash.sms.send(request, { idempotencyKey: key });
    expect(original.lastResponse.replayed).toBe(false);

    const afterRestart = clientFor(account.token);
    const replay = await afterRestart.sms.send(request, { idempotencyKey: key });
    expect(replay.lastResponse).toMatchObject({ replayed: true, idempotencyKey: key });
    expect(replay.campaign_id).toBe(original.campaign_id);
    expect(replay.messages.map((m) => m.provider_message_id)).toEqual(
      original.messages.map((m) => m.provider_message_id),
    );

    const balance = await afterRestart.balance.get();
    expect(balance.balance).toBe(10_000 - original.cost);
    const charges = (await env.admin.ledger(account.accountId)).filter((entry) => entry.kind === 'sms');
    expect(charges.reduce((sum, entry) => sum + entry.amount, 0)).toBe(original.cost);
  });
});

describe('pagination', () => {
  it('walks every page without skips or repeats while rows are inserted', async () => {
    const { client } = await accountClient();
    const recipients = Array.from({ length: 7 }, (_, i) => `23480123456${String(i + 10)}`);
    const first = await client.sms.send({ recipients, sender: 'ACME', message: 'Page me' });
    const existing = first.messages.map((m) => m.provider_message_id);

    const seen: string[] = [];
    let pages = 0;
    for await (const page of client.messages.list({ perPage: 3 }).pages()) {
      pages += 1;
      expect(page.perPage).toBe(3);
      seen.push(...page.data.map((m) => m.id));
      // Insert between pages: the cursor must neither skip nor repeat what was there.
      if (pages <= 2)
        await client.sms.send({ recipients: [MAGIC_NUMBERS.delivered], sender: 'ACME', message: `Inserted ${pages}` });
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(existing));

    const limited = await client.messages.list({ perPage: 2 }).toArray({ limit: 3 });
    expect(limited).toHaveLength(3);
  });

  it('filters by status', async () => {
    const { client } = await accountClient();
    await client.sms.send({ recipients: [ALICE], sender: 'ACME', message: 'Status filter' });
    const queued = await client.messages.list({ status: 'queued' }).toArray();
    const expired = await client.messages.list({ status: 'expired' }).toArray();
    expect(queued.every((m) => m.status === 'queued')).toBe(true);
    expect(expired).toEqual([]);
  });
});

describe('input validation and logging', () => {
  it('rejects invalid input before anything reaches the sandbox', async () => {
    const observed = observedFetch();
    const { client } = await accountClient({}, { fetch: observed.fetch });
    await expect(
      client.sms.send({ recipients: ['not-a-number'], sender: 'ACME', message: 'x' }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    await expect(client.otp.verify({ otp_id: 'otp_1', code: 'abc' })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(client.webhooks.create({ url: 'ftp://example.com' })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(client.webhooks.update('wh_1', {})).rejects.toBeInstanceOf(InvalidInputError);
    expect(() => client.campaigns.list({ perPage: 0 })).toThrow(InvalidInputError);
    expect(observed.exchanges).toHaveLength(0);
  });

  it('logs each attempt without the token and, by default, without numbers or texts', async () => {
    const logs: LogEntry[] = [];
    const { client, token } = await accountClient({}, { logger: (entry) => logs.push(entry) });
    const sent = await client.sms.send({ recipients: [ALICE, BOB], sender: 'ACME', message: 'Very personal text' });
    await client.messages.get(sent.messages[0]!.provider_message_id);
    await client.sms
      .send({ recipients: [ALICE], sender: 'NOTAPPROVED', message: 'Very personal text' })
      .catch((e: unknown) => e);

    expect(logs.map((l) => [l.method, l.path, l.status])).toEqual([
      ['POST', '/sms/send', 202],
      ['GET', `/messages/${sent.messages[0]!.provider_message_id}`, 200],
      ['POST', '/sms/send', 422],
    ]);
    const text = JSON.stringify(logs);
    for (const secret of [token, ALICE, BOB, 'Very personal text']) expect(text).not.toContain(secret);
    expect(logs[2]?.error).toMatchObject({ type: 'ValidationError', code: 'sender_not_approved' });
  });

  it('reports an unreachable provider as a MessagingError, not a crash', async () => {
    const { client } = await accountClient();
    const closed = await startTestSandbox();
    const baseUrl = closed.sandbox.baseUrl;
    await closed.close();
    const gone = new MessagingClient({ baseUrl, token: 'whatever-token', maxRetries: 1, initialRetryDelayMs: 1 });
    const error = await gone.balance.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe('ConnectionError');
    expect(error).not.toBeInstanceOf(MessagingApiError);
    await expect(client.balance.get()).resolves.toBeDefined();
  });
});
