/** Spec "Limits": request rate per token, X-RateLimit-* headers, 429 + Retry-After, OTP per-IP, page size, recipients, body size. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RECIPIENTS_PER_REQUEST } from '../../src/api/constants.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { apiFor, manualClock, sms } from './helpers.js';

describe('request rate', () => {
  const clock = manualClock();
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({ now: clock.now });
  });
  afterAll(() => t.close());

  it('120 requests per minute per token by default, X-RateLimit-* headers on every authenticated response', async () => {
    const { token } = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, token);
    const resetAt = String(Math.ceil((clock.now() + 60_000) / 1000));
    for (let i = 1; i <= 120; i += 1) {
      // Errors count and carry the headers too (here a 404 every tenth request).
      const reply = await api('GET', i % 10 === 0 ? '/messages/nope' : '/balance');
      expect(reply.headers.get('x-ratelimit-limit')).toBe('120');
      expect(reply.headers.get('x-ratelimit-remaining')).toBe(String(120 - i));
      expect(reply.headers.get('x-ratelimit-reset')).toBe(resetAt);
    }
    clock.advance(15_000);
    const limited = await api('GET', '/balance');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('45');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');

    clock.advance(45_000);
    const next = await api('GET', '/balance');
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-remaining')).toBe('119');
  });

  it('the limit is per token and configurable per account', async () => {
    const { accountId, token } = await t.newAccount({ ratePerMinute: 2 });
    const second = await t.admin.createToken(accountId, { scopes: ['balance'] });
    const api = apiFor(t.sandbox.baseUrl, token);
    expect((await api('GET', '/balance')).status).toBe(200);
    expect((await api('GET', '/balance')).status).toBe(200);
    const limited = await api('GET', '/balance');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await apiFor(t.sandbox.baseUrl, second.token)('GET', '/balance')).status).toBe(200);
    await t.admin.setRateLimit(accountId, 5);
    const raised = await api('GET', '/balance');
    expect(raised.status).toBe(200);
    expect(raised.headers.get('x-ratelimit-limit')).toBe('5');
  });

  it('unauthenticated responses carry no rate-limit headers', async () => {
    const reply = await apiFor(t.sandbox.baseUrl)('GET', '/balance');
    expect(reply.status).toBe(401);
    expect(reply.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('OTP sends per source IP', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({ otpPerIpPerMinute: 2 });
  });
  afterAll(() => t.close());

  it('limits POST /otp/send per IP across tokens and accounts, and nothing else', async () => {
    const a = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    const b = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    expect((await a('POST', '/otp/send', { recipient: '12025550100' })).status).toBe(200);
    expect((await b('POST', '/otp/send', { recipient: '12025550100' })).status).toBe(200);
    const limited = await b('POST', '/otp/send', { recipient: '12025550100' });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await b('POST', '/sms/send', sms(['12025550100']))).status).toBe(202);
  });
});

describe('sizes', () => {
  let t: TestSandbox;
  let api: ReturnType<typeof apiFor>;
  beforeAll(async () => {
    t = await startTestSandbox({ bodyLimitBytes: 64 * 1024 });
    api = apiFor(t.sandbox.baseUrl, (await t.newAccount({ balance: 100_000_000, ratePerMinute: 1000 })).token);
  });
  afterAll(() => t.close());

  it('per_page defaults to 50 and may not exceed 200', async () => {
    expect((await api('GET', '/messages')).body.per_page).toBe(50);
    expect((await api('GET', '/messages?per_page=200')).body.per_page).toBe(200);
    for (const bad of ['201', '0', '-1', 'ten', '1.5']) {
      const reply = await api('GET', `/campaigns?per_page=${bad}`);
      expect(reply.status, bad).toBe(422);
      expect(reply.body.details[0].path).toBe('per_page');
    }
  });

  it(`at most ${MAX_RECIPIENTS_PER_REQUEST} recipients per request`, async () => {
    const numbers = Array.from(
      { length: MAX_RECIPIENTS_PER_REQUEST + 1 },
      (_, i) => `1202555${String(1000 + i).padStart(4, '0')}`,
    );
    const tooMany = await api('POST', '/sms/send', sms(numbers));
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.details.map((d: { path: string }) => d.path)).toContain('recipients');
    const max = await api('POST', '/sms/send', sms(numbers.slice(1)));
    expect(max.status).toBe(202);
    expect(max.body.data.messages).toHaveLength(MAX_RECIPIENTS_PER_REQUEST);
  });

  it('a body over the limit is 413 payload_too_large', async () => {
    const reply = await api('POST', '/sms/send', sms(['12025550100'], 'x'.repeat(70 * 1024)));
    expect(reply.status).toBe(413);
    expect(reply.body.code).toBe('payload_too_large');
  });
});
