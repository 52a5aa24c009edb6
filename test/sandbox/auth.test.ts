/** Spec "Authentication" 1–3, "IP allowlist" 1–3, token storage, and account isolation. */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/api/errors.js';
import { buildPath, type Route, routes } from '../../src/api/routes.js';
import { SCOPES } from '../../src/api/scopes.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { apiFor, sms } from './helpers.js';

const allRoutes = Object.entries(routes) as [string, Route][];
const pathOf = (r: Route) => buildPath(r.path, { id: 'some_id' });

describe('authentication', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox();
  });
  afterAll(() => t.close());

  it('rule 1+2: every operation answers 401 without a token, with a JSON error body', async () => {
    const anonymous = apiFor(t.sandbox.baseUrl);
    for (const [name, route] of allRoutes) {
      const reply = await anonymous(route.method, pathOf(route), route.body ? {} : undefined);
      expect(reply.status, name).toBe(401);
      expect(ErrorBody.parse(reply.body).code).toBe('unauthorized');
    }
  });

  it('rule 2: a malformed header, an unknown token and a revoked token are 401', async () => {
    const { token, tokenId } = await t.newAccount();
    const raw = (authorization: string) =>
      fetch(`${t.sandbox.baseUrl}/balance`, { headers: { authorization } }).then((r) => r.status);
    expect(await raw(`Basic ${token}`)).toBe(401);
    expect(await raw('Bearer')).toBe(401);
    expect(await raw(`Bearer ${token}x`)).toBe(401);
    expect(await raw(`bearer ${token}`)).toBe(200); // the scheme name is case-insensitive (RFC 9110)
    await t.admin.revokeToken(tokenId);
    const revoked = await apiFor(t.sandbox.baseUrl, token)('GET', '/balance');
    expect(revoked.status).toBe(401);
    expect(revoked.body.code).toBe('unauthorized');
    expect(revoked.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('rule 3: every operation answers 403 insufficient_scope to a token lacking its scope', async () => {
    for (const [name, route] of allRoutes) {
      const { token } = await t.newAccount({ scopes: SCOPES.filter((s) => s !== route.scope) });
      const reply = await apiFor(t.sandbox.baseUrl, token)(route.method, pathOf(route), route.body ? {} : undefined);
      expect(reply.status, name).toBe(403);
      expect(reply.body.code, name).toBe('insufficient_scope');
    }
  });

  it('rule 3: a token with the scope gets through (spec scope table)', async () => {
    const { token } = await t.newAccount({ scopes: ['balance'] });
    const api = apiFor(t.sandbox.baseUrl, token);
    expect((await api('GET', '/balance')).status).toBe(200);
    expect((await api('GET', '/pricing')).status).toBe(200);
    expect((await api('POST', '/sms/send', sms(['12025550100']))).status).toBe(403);
    expect((await api('GET', '/messages')).status).toBe(403);
    const scopeTable: Record<string, string> = {
      smsSend: 'sms:send',
      otpSend: 'otp',
      otpVerify: 'otp',
      voiceSend: 'voice',
      voiceGet: 'voice',
      lookupCreate: 'lookup',
      lookupList: 'lookup',
      lookupGet: 'lookup',
      emailVerify: 'email:verify',
      messageList: 'reports',
      campaignList: 'reports',
      messageGet: 'reports',
      campaignGet: 'reports',
      balanceGet: 'balance',
      webhookCreate: 'webhooks',
    };
    for (const [name, scope] of Object.entries(scopeTable))
      expect(routes[name as keyof typeof routes].scope, name).toBe(scope);
  });
});

describe('token storage', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-auth-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps only a SHA-256 hash of each token; the secret is nowhere in the database files', async () => {
    const t = await startTestSandbox({ db: join(dir, 'sandbox.db') });
    const { accountId, token } = await t.newAccount();
    const second = await t.admin.createToken(accountId, { scopes: ['balance'] });
    expect(second.token).not.toBe(token);
    expect((await apiFor(t.sandbox.baseUrl, second.token)('GET', '/balance')).status).toBe(200);
    await t.close();
    const files = readdirSync(dir).map((f) => readFileSync(join(dir, f)));
    const hash = createHash('sha256').update(token).digest('hex');
    expect(files.some((bytes) => bytes.includes(hash))).toBe(true);
    for (const bytes of files) {
      expect(bytes.includes(token)).toBe(false);
      expect(bytes.includes(second.token)).toBe(false);
    }
  });
});

describe('IP allowlist', () => {
  let t: TestSandbox;
  let proxied: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox();
    proxied = await startTestSandbox({ trustProxy: 'loopback' });
  });
  afterAll(async () => {
    await t.close();
    await proxied.close();
  });

  it('rules 1–3: no list accepts any address; a list refuses others with 403 ip_not_allowed', async () => {
    const { accountId, token } = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, token);
    expect((await api('GET', '/balance')).status).toBe(200);

    await t.admin.setIpAllowlist(accountId, ['10.1.2.3', '2001:db8::1']);
    const refused = await api('GET', '/balance');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('ip_not_allowed');

    await t.admin.setIpAllowlist(accountId, ['10.1.2.3', '127.0.0.1']);
    expect((await api('GET', '/balance')).status).toBe(200);

    // An IPv4-mapped IPv6 entry is the same address.
    await t.admin.setIpAllowlist(accountId, ['::ffff:127.0.0.1']);
    expect((await api('GET', '/balance')).status).toBe(200);

    await t.admin.setIpAllowlist(accountId, []);
    expect((await api('GET', '/balance')).status).toBe(200);
  });

  it('judges the socket address: X-Forwarded-For is ignored without a trusted proxy', async () => {
    const { accountId, token } = await t.newAccount();
    await t.admin.setIpAllowlist(accountId, ['10.1.2.3']);
    const reply = await apiFor(t.sandbox.baseUrl, token)('GET', '/balance', undefined, {
      'x-forwarded-for': '10.1.2.3',
    });
    expect(reply.status).toBe(403);
    expect(reply.body.code).toBe('ip_not_allowed');
  });

  it('behind a trusted proxy (--trust-proxy loopback) X-Forwarded-For decides', async () => {
    const { accountId, token } = await proxied.newAccount();
    await proxied.admin.setIpAllowlist(accountId, ['10.1.2.3']);
    const api = apiFor(proxied.sandbox.baseUrl, token);
    expect((await api('GET', '/balance', undefined, { 'x-forwarded-for': '10.1.2.3' })).status).toBe(200);
    expect((await api('GET', '/balance', undefined, { 'x-forwarded-for': '10.9.9.9' })).status).toBe(403);
    expect((await api('GET', '/balance')).status).toBe(403);
  });
});

describe('account isolation', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox();
  });
  afterAll(() => t.close());

  it("one account's token never sees or changes another's records (404)", async () => {
    const a = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    const b = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);

    const sent = (await a('POST', '/sms/send', sms(['12025550100']))).body.data;
    const otp = (await a('POST', '/otp/send', { recipient: '12025550100' })).body.data;
    const call = (await a('POST', '/voice/send', { recipient: '12025550100', message: 'Hello' })).body.data;
    const lookup = (await a('POST', '/lookup', { number: '12025550100' })).body.data;
    const hook = (await a('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook' })).body.data;

    const notFound = [
      await b('GET', `/messages/${sent.messages[0].provider_message_id}`),
      await b('GET', `/campaigns/${sent.campaign_id}`),
      await b('GET', `/voice/${call.id}`),
      await b('GET', `/lookup/${lookup.id}`),
      await b('GET', `/webhooks/${hook.id}`),
      await b('PATCH', `/webhooks/${hook.id}`, { batch: true }),
      await b('DELETE', `/webhooks/${hook.id}`),
      await b('POST', '/otp/verify', { otp_id: otp.otp_id, code: '000000' }),
    ];
    for (const reply of notFound) {
      expect(reply.status).toBe(404);
      expect(reply.body.code).toBe('not_found');
    }
    for (const list of ['/messages', '/campaigns', '/lookups', '/webhooks']) {
      expect((await b('GET', list)).body.data, list).toEqual([]);
    }
    // A's records are untouched by B's attempts.
    expect((await a('GET', `/webhooks/${hook.id}`)).body.data.batch).toBe(false);
    expect(
      (await a('POST', '/otp/verify', { otp_id: otp.otp_id, code: '000000' })).body.data.attempts_remaining,
    ).toBeGreaterThanOrEqual(4);
  });
});
