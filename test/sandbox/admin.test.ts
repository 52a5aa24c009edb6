/** The admin API (the account "dashboard") and its client, SandboxAdmin. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account, CreatedToken } from '../../src/api/admin.js';
import { SandboxAdmin, SandboxAdminError, startSandbox } from '../../src/sandbox/index.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { apiFor, sms } from './helpers.js';

describe('admin API', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({ adminToken: 'admin-token-for-tests' });
  });
  afterAll(() => t.close());

  it('requires the admin token', async () => {
    expect(t.sandbox.adminToken).toBe('admin-token-for-tests');
    const wrong = new SandboxAdmin({ url: t.sandbox.url, adminToken: 'not-the-admin-token' });
    await expect(wrong.createAccount({ name: 'x' })).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    const anonymous = await apiFor(t.sandbox.url)('GET', '/admin/inbox?to=12025550100');
    expect(anonymous.status).toBe(401);
    // An API token is not an admin token.
    const { token } = await t.newAccount();
    expect((await apiFor(t.sandbox.url, token)('GET', '/admin/inbox?to=12025550100')).status).toBe(401);
  });

  it('creates accounts and tokens (the secret shown once), approves senders, credits, caps and limits', async () => {
    const account = Account.parse(await t.admin.createAccount({ name: 'Acme', balance: 250, currency: 'NGN' }));
    expect(account).toMatchObject({ name: 'Acme', balance: 250, currency: 'NGN' });
    const created = CreatedToken.parse(
      await t.admin.createToken(account.id, { scopes: ['sms:send', 'balance'], name: 'backend' }),
    );
    expect(created.token).toMatch(/^sk_sandbox_/);
    expect(created.scopes).toEqual(['sms:send', 'balance']);
    const api = apiFor(t.sandbox.baseUrl, created.token);
    expect((await api('POST', '/sms/send', sms(['12025550100'], 'hi', 'Acme Ltd'))).body.code).toBe(
      'sender_not_approved',
    );
    await t.admin.addSender(account.id, 'Acme Ltd');
    expect((await api('POST', '/sms/send', sms(['12025550100'], 'hi', 'Acme Ltd'))).status).toBe(202);
    await t.admin.credit(account.id, 50);
    expect((await api('GET', '/balance')).body.data).toMatchObject({ balance: 250 + 50 - 3, currency: 'NGN' });
    await t.admin.setSpendCap(account.id, 3);
    expect((await api('POST', '/sms/send', sms(['12025550100'], 'hi', 'Acme Ltd'))).body.code).toBe(
      'spend_cap_exceeded',
    );
    await t.admin.setRateLimit(account.id, 7);
    expect((await api('GET', '/balance')).headers.get('x-ratelimit-limit')).toBe('7');
    await t.admin.revokeToken(created.id);
    expect((await api('GET', '/balance')).status).toBe(401);
  });

  it('the inbox lists what was sent to a number, newest first, texts in clear', async () => {
    const { token } = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, token);
    await api('POST', '/sms/send', sms(['12025550160'], 'first'));
    await api('POST', '/sms/send', sms(['12025550160', '12025550161'], 'second'));
    const inbox = await t.admin.inbox('12025550160');
    expect(inbox.map((e) => e.text)).toEqual(['second', 'first']);
    expect(inbox[0]).toMatchObject({ kind: 'sms', mobile_number: '+12025550160', sender: 'ACME' });
    expect(await t.admin.inbox('12025550169')).toEqual([]);
    await expect(t.admin.inbox('+12025550160')).rejects.toMatchObject({ status: 422, code: 'validation_failed' });
  });

  it('the ledger records every charge with its reference, recipient and idempotency key', async () => {
    const { accountId, token } = await t.newAccount({ balance: 100 });
    const sent = (
      await apiFor(t.sandbox.baseUrl, token)('POST', '/sms/send', sms(['12025550170', '12025550171']), {
        'Idempotency-Key': 'k1',
      })
    ).body.data;
    const ledger = await t.admin.ledger(accountId);
    expect(ledger[0]).toMatchObject({ kind: 'credit', amount: 100, balance_after: 100 });
    expect(ledger.slice(1)).toEqual(
      sent.messages.map((m: { provider_message_id: string; mobile_number: string }, i: number) =>
        expect.objectContaining({
          kind: 'sms',
          reference: m.provider_message_id,
          recipient: m.mobile_number,
          amount: 3,
          balance_after: 100 - 3 * (i + 1),
          idempotency_key: 'k1',
        }),
      ),
    );
  });

  it('answers clear errors: unknown ids 404, bad input 422', async () => {
    await expect(t.admin.createToken('acct_unknown', { scopes: ['otp'] })).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
    await expect(t.admin.revokeToken('tok_unknown')).rejects.toMatchObject({ status: 404 });
    await expect(t.admin.ledger('acct_unknown')).rejects.toMatchObject({ status: 404 });
    const { accountId } = await t.newAccount();
    const rejections: [Promise<unknown>, string][] = [
      [t.admin.createToken(accountId, { scopes: ['root' as 'otp'] }), 'scopes.0'],
      [t.admin.createToken(accountId, { scopes: [] }), 'scopes'],
      [t.admin.setIpAllowlist(accountId, ['not-an-ip']), 'addresses.0'],
      [t.admin.addSender(accountId, 'this sender is far too long'), 'sender'],
      [t.admin.credit(accountId, -5), 'amount'],
      [t.admin.setRateLimit(accountId, 0), 'per_minute'],
      [t.admin.createAccount({ name: '' }), 'name'],
    ];
    for (const [promise, path] of rejections) {
      const error = await promise.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, path).toBeInstanceOf(SandboxAdminError);
      expect((error as SandboxAdminError).status).toBe(422);
      expect((error as SandboxAdminError).details?.[0]?.path).toBe(path);
    }
  });
});

describe('generated admin token', () => {
  it('is generated when none is given, and works', async () => {
    const sandbox = await startSandbox({ port: 0, db: ':memory:', log: () => {} });
    try {
      expect(sandbox.adminTokenGenerated).toBe(true);
      expect(sandbox.adminToken.length).toBeGreaterThanOrEqual(32);
      const admin = new SandboxAdmin({ url: sandbox.url, adminToken: sandbox.adminToken });
      expect((await admin.createAccount({ name: 'generated' })).balance).toBe(0);
      expect((await fetch(`${sandbox.url}/healthz`)).status).toBe(200);
    } finally {
      await sandbox.close();
    }
  });
});
