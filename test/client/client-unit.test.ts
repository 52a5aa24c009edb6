/** The client against a scripted fetch: request building, retries, idempotency, parsing, logging. */
import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  InvalidInputError,
  type LogEntry,
  MessagingApiError,
  MessagingClient,
  type MessagingClientOptions,
  RateLimitError,
  ServerError,
  TimeoutError,
} from '../../src/client/index.js';
import { type Answer, fakeFetch, smsResult } from './fake-fetch.js';

const TOKEN = 'sk_test_unit_secret_token';
const SMS = { recipients: ['2348012345678', '2348012345679'], sender: 'ACME', message: 'Hello there' };

function clientWith(script: Answer[], options: Partial<MessagingClientOptions> = {}) {
  const fake = fakeFetch(...script);
  const logs: LogEntry[] = [];
  const client = new MessagingClient({
    baseUrl: 'http://api.test/v1/',
    token: TOKEN,
    fetch: fake.fetch,
    initialRetryDelayMs: 1,
    maxRetryDelayMs: 5,
    logger: (entry) => logs.push(entry),
    ...options,
  });
  return { client, requests: fake.requests, logs };
}

describe('requests', () => {
  it('builds the request from the route table: URL, auth, JSON body, idempotency key', async () => {
    const { client, requests } = clientWith([{ status: 202, body: { data: smsResult() } }]);
    await client.sms.send(SMS);
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.method).toBe('POST');
    expect(request?.url.href).toBe('http://api.test/v1/sms/send');
    expect(request?.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(request?.headers.get('content-type')).toBe('application/json');
    expect(request?.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(request?.body).toEqual(SMS);
  });

  it('encodes path parameters and sends only the query the caller gave', async () => {
    const { client, requests } = clientWith([{ status: 200, body: { data: [], next_cursor: null, per_page: 50 } }]);
    await client.messages.list({ status: 'delivered' }).toArray();
    expect(requests[0]?.url.search).toBe('?status=delivered');
    await client.voice.get('a/b c').catch(() => undefined);
    expect(requests[1]?.url.pathname).toBe('/v1/voice/a%2Fb%20c');
  });

  it('rejects invalid input with InvalidInputError and sends nothing', async () => {
    const { client, requests } = clientWith([{ status: 202, body: { data: smsResult() } }]);
    const error = await client.sms.send({ recipients: ['12'], sender: 'ACME', message: '' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).details.map((d) => d.path)).toEqual(
      expect.arrayContaining(['recipients.0', 'message']),
    );
    await expect(client.messages.get('')).rejects.toBeInstanceOf(InvalidInputError);
    expect(() => client.messages.list({ perPage: 500 })).toThrow(InvalidInputError);
    await expect(client.sms.send(SMS, { idempotencyKey: 'bad\nkey' })).rejects.toBeInstanceOf(InvalidInputError);
    expect(requests).toHaveLength(0);
  });

  it('refuses a bad configuration at construction', () => {
    expect(() => new MessagingClient({ baseUrl: 'not a url', token: TOKEN })).toThrow(InvalidInputError);
    expect(() => new MessagingClient({ baseUrl: 'http://x/v1', token: '' })).toThrow(InvalidInputError);
    expect(() => new MessagingClient({ baseUrl: 'http://x/v1', token: TOKEN, maxRetries: -1 })).toThrow(
      InvalidInputError,
    );
    expect(() => new MessagingClient({ baseUrl: 'http://x/v1', token: TOKEN, timeoutMs: 0 })).toThrow(
      InvalidInputError,
    );
    expect(() => new MessagingClient({ baseUrl: 'ftp://x/v1', token: TOKEN })).toThrow(InvalidInputError);
  });
});

describe('results', () => {
  it('resolves to the data payload with a non-enumerable lastResponse', async () => {
    const { client } = clientWith([
      {
        status: 202,
        body: { data: smsResult({ extra_field: 'kept' }) },
        headers: {
          'idempotent-replayed': 'true',
          'x-request-id': 'req_9',
          'x-ratelimit-limit': '120',
          'x-ratelimit-remaining': '119',
          'x-ratelimit-reset': '60',
        },
      },
    ]);
    const result = await client.sms.send(SMS, { idempotencyKey: 'order-42' });
    expect(result.campaign_id).toBe('cmp_1');
    expect((result as Record<string, unknown>).extra_field).toBe('kept');
    expect(result.lastResponse).toMatchObject({
      status: 202,
      requestId: 'req_9',
      idempotencyKey: 'order-42',
      replayed: true,
      rateLimit: { limit: 120, remaining: 119 },
    });
    expect(Object.keys(result)).not.toContain('lastResponse');
    expect(JSON.parse(JSON.stringify(result))).toEqual(smsResult({ extra_field: 'kept' }));
    expect(client.rateLimit?.remaining).toBe(119);
  });

  it('tolerates a payload that deviates from the schema, and reports where', async () => {
    const { client, logs } = clientWith([{ status: 202, body: { data: { campaign_id: 'cmp_1' } } }]);
    const result = await client.sms.send(SMS);
    expect(result.campaign_id).toBe('cmp_1');
    expect(logs[0]?.responseIssues).toEqual(expect.arrayContaining([expect.stringMatching(/^cost/)]));
  });

  it('throws a clear error for a response that is not the envelope at all, or when strict', async () => {
    for (const answer of [
      { status: 200, rawBody: '<html>' },
      { status: 200, body: { balance: 1 } },
    ]) {
      const { client } = clientWith([answer]);
      const error = await client.balance.get().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MessagingApiError);
      expect((error as MessagingApiError).code).toBe('invalid_response');
    }
    const { client } = clientWith([{ status: 200, body: { data: { balance: 'lots' } } }], { strictResponses: true });
    await expect(client.balance.get()).rejects.toMatchObject({ code: 'invalid_response' });
  });

  it('resolves webhooks.delete (204) to a deletion marker', async () => {
    const { client, requests } = clientWith([{ status: 204 }]);
    const result = await client.webhooks.delete('wh_1');
    expect(result).toEqual({ id: 'wh_1', deleted: true });
    expect(result.lastResponse.status).toBe(204);
    expect(requests[0]?.method).toBe('DELETE');
  });
});

describe('retries', () => {
  it('reuses the same idempotency key on its own retries after a 5xx and a network failure', async () => {
    const { client, requests } = clientWith([
      { status: 503, body: { code: 'internal_error', message: 'x' } },
      { networkError: 'ECONNRESET' },
      { status: 202, body: { data: smsResult() } },
    ]);
    const result = await client.sms.send(SMS);
    expect(requests).toHaveLength(3);
    const keys = new Set(requests.map((r) => r.headers.get('idempotency-key')));
    expect(keys.size).toBe(1);
    expect(result.lastResponse.idempotencyKey).toBe([...keys][0]);
  });

  it('makes a fresh key per logical call', async () => {
    const { client, requests } = clientWith([{ status: 202, body: { data: smsResult() } }]);
    await client.sms.send(SMS);
    await client.sms.send(SMS);
    expect(requests[0]?.headers.get('idempotency-key')).not.toBe(requests[1]?.headers.get('idempotency-key'));
  });

  it('does not retry a POST without an idempotency key on a 5xx or a network failure', async () => {
    const five = clientWith([
      { status: 500, body: { code: 'internal_error', message: 'x' } },
      { status: 200, body: { data: {} } },
    ]);
    await expect(five.client.lookups.create({ number: '+2348012345678' })).rejects.toBeInstanceOf(ServerError);
    expect(five.requests).toHaveLength(1);
    const net = clientWith([{ networkError: 'ECONNREFUSED' }]);
    await expect(net.client.otp.verify({ otp_id: 'otp_1', code: '123456' })).rejects.toBeInstanceOf(ConnectionError);
    expect(net.requests).toHaveLength(1);
  });

  it('retries GETs on 5xx up to maxRetries, then throws', async () => {
    const { client, requests, logs } = clientWith([{ status: 502, rawBody: 'Bad gateway' }], { maxRetries: 3 });
    const error = await client.balance.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe('http_502');
    expect(requests).toHaveLength(4);
    expect(logs.map((l) => l.attempt)).toEqual([1, 2, 3, 4]);
    expect(logs.slice(0, 3).every((l) => l.retryInMs !== undefined)).toBe(true);
    expect(logs[3]?.retryInMs).toBeUndefined();
  });

  it('retries a 429 on any route (the provider did not act), and a 409 on a keyed send', async () => {
    const { client, requests } = clientWith([
      { status: 429, body: { code: 'rate_limited', message: 'slow down' }, headers: { 'retry-after': '0' } },
      { status: 200, body: { data: { id: 'lk_1' } } },
    ]);
    await client.lookups.create({ number: '+2348012345678' });
    expect(requests).toHaveLength(2);

    const conflict = clientWith([
      { status: 409, body: { code: 'idempotency_in_progress', message: 'busy' } },
      { status: 202, body: { data: smsResult() } },
    ]);
    await conflict.client.sms.send(SMS, { idempotencyKey: 'k1' });
    expect(conflict.requests.map((r) => r.headers.get('idempotency-key'))).toEqual(['k1', 'k1']);
  });

  it('throws a Retry-After beyond maxRetryAfterMs at once, with retryAfterMs', async () => {
    const { client, requests } = clientWith(
      [{ status: 429, body: { code: 'rate_limited', message: 'x' }, headers: { 'retry-after': '120' } }],
      { maxRetryAfterMs: 1000 },
    );
    const error = await client.balance.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(120_000);
    expect(requests).toHaveLength(1);
  });

  it('honours maxRetries: 0 per call', async () => {
    const { client, requests } = clientWith([{ status: 503, body: {} }]);
    await expect(client.balance.get({ maxRetries: 0 })).rejects.toBeInstanceOf(ServerError);
    expect(requests).toHaveLength(1);
  });
});

describe('timeouts and cancellation', () => {
  it('turns a hung attempt into a TimeoutError (a ConnectionError)', async () => {
    const { client, requests } = clientWith([{ hang: true }], { timeoutMs: 20, maxRetries: 1 });
    const error = await client.balance.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(requests).toHaveLength(2);
  });

  it('rejects with the abort reason and does not retry', async () => {
    const { client, requests } = clientWith([{ hang: true }], { maxRetries: 5 });
    const controller = new AbortController();
    const pending = client.balance.get({ signal: controller.signal });
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 10);
    await expect(pending).rejects.toBe(reason);
    expect(requests).toHaveLength(1);
  });

  it('stops waiting between retries when aborted', async () => {
    const { client, requests } = clientWith([{ status: 429, body: {}, headers: { 'retry-after': '20' } }], {
      maxRetryAfterMs: 60_000,
    });
    const controller = new AbortController();
    const pending = client.balance.get({ signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests).toHaveLength(1);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const { client, requests } = clientWith([{ status: 200, body: { data: {} } }]);
    await expect(client.balance.get({ signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests).toHaveLength(0);
  });
});

describe('pagination', () => {
  const page = (ids: string[], next: string | null) => ({
    status: 200,
    body: { data: ids.map((id) => ({ id })), next_cursor: next, per_page: 2 },
  });

  it('passes next_cursor back unchanged and stops on null', async () => {
    const { client, requests } = clientWith([page(['a', 'b'], 'opaque+/=cursor 1'), page(['c'], null)]);
    const ids: string[] = [];
    for await (const message of client.messages.list({ perPage: 2 })) ids.push(message.id);
    expect(ids).toEqual(['a', 'b', 'c']);
    expect(requests[1]?.url.searchParams.get('cursor')).toBe('opaque+/=cursor 1');
    expect(requests.map((r) => r.url.searchParams.get('per_page'))).toEqual(['2', '2']);
  });

  it('exposes pages and stops fetching once toArray reaches its limit', async () => {
    const { client, requests } = clientWith([page(['a', 'b'], 'c1'), page(['c', 'd'], 'c2'), page(['e'], null)]);
    const pages = [];
    for await (const p of client.campaigns.list().pages()) pages.push(p);
    expect(pages.map((p) => p.nextCursor)).toEqual(['c1', 'c2', null]);
    expect(pages[0]?.perPage).toBe(2);
    expect(pages[0]?.lastResponse.status).toBe(200);

    requests.length = 0;
    const { client: fresh, requests: freshRequests } = clientWith([
      page(['a', 'b'], 'c1'),
      page(['c', 'd'], 'c2'),
      page(['e'], null),
    ]);
    expect((await fresh.webhooks.list().toArray({ limit: 3 })).map((w) => w.id)).toEqual(['a', 'b', 'c']);
    expect(freshRequests).toHaveLength(2);
  });
});

describe('logging', () => {
  it('never hands the token, and by default no number or text, to the logger', async () => {
    const { client, logs } = clientWith([
      { status: 422, body: { code: 'validation_failed', message: 'recipient 2348012345678 is barred' } },
    ]);
    await client.sms.send(SMS).catch(() => undefined);
    await client.otp.verify({ otp_id: 'otp_1', code: '987654' }).catch(() => undefined);
    const text = JSON.stringify(logs);
    expect(logs.length).toBeGreaterThanOrEqual(2);
    for (const secret of [TOKEN, '2348012345678', '2348012345679', 'Hello there', '987654'])
      expect(text).not.toContain(secret);
    expect(logs[0]).toMatchObject({
      method: 'POST',
      path: '/sms/send',
      status: 422,
      attempt: 1,
      error: { type: 'ValidationError', code: 'validation_failed' },
    });
  });

  it('logs personal data when logPersonalData is on, still never the token or the OTP code', async () => {
    const { client, logs } = clientWith(
      [
        { status: 202, body: { data: smsResult() } },
        { status: 200, body: { data: {} } },
      ],
      { logPersonalData: true },
    );
    await client.sms.send(SMS);
    await client.otp.verify({ otp_id: 'otp_1', code: '987654' }).catch(() => undefined);
    const text = JSON.stringify(logs);
    expect(text).toContain('2348012345678');
    expect(text).toContain('Hello there');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('987654');
  });

  it('survives a logger that throws', async () => {
    const { client } = clientWith(
      [{ status: 200, body: { data: { balance: 1, currency: 'USD', spend_cap: null, spent_this_month: 0 } } }],
      {
        logger: () => {
          throw new Error('logger broke');
        },
      },
    );
    await expect(client.balance.get()).resolves.toMatchObject({ balance: 1 });
  });
});
