/** Spec "Idempotency" 1–4, plus key reuse (422), per-account keys, 24 h expiry and release on error. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { apiFor, manualClock, sms } from './helpers.js';

const key = (k: string) => ({ 'Idempotency-Key': k });

describe('idempotency', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox();
  });
  afterAll(() => t.close());

  it('rules 1–3: a retry of POST /sms/send replays the response with Idempotent-Replayed: true, no second send or charge', async () => {
    const { accountId, token } = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, token);
    const body = sms(['12025550100', '12025550111']);
    const first = await api('POST', '/sms/send', body, key('order-1'));
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Same JSON with keys in another order is the same request.
    const retry = await api(
      'POST',
      '/sms/send',
      { message: body.message, sender: body.sender, recipients: body.recipients },
      key('order-1'),
    );
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);

    expect((await api('GET', '/campaigns')).body.data).toHaveLength(1);
    expect((await api('GET', '/messages')).body.data).toHaveLength(2);
    const charges = (await t.admin.ledger(accountId)).filter((e) => e.kind === 'sms');
    expect(charges).toHaveLength(2);
    expect(charges.every((c) => c.idempotency_key === 'order-1')).toBe(true);
  });

  it('rule 1: POST /otp/send and POST /voice/send replay too', async () => {
    const { accountId, token } = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, token);
    const otp1 = await api('POST', '/otp/send', { recipient: '12025550120' }, key('otp-1'));
    const otp2 = await api('POST', '/otp/send', { recipient: '12025550120' }, key('otp-1'));
    expect(otp2.headers.get('idempotent-replayed')).toBe('true');
    expect(otp2.body.data.otp_id).toBe(otp1.body.data.otp_id);
    expect(await t.admin.inbox('12025550120')).toHaveLength(1);

    const call1 = await api('POST', '/voice/send', { recipient: '12025550121', message: 'Hello' }, key('call-1'));
    const call2 = await api('POST', '/voice/send', { recipient: '12025550121', message: 'Hello' }, key('call-1'));
    expect(call2.headers.get('idempotent-replayed')).toBe('true');
    expect(call2.body.data.id).toBe(call1.body.data.id);
    const kinds = (await t.admin.ledger(accountId)).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'otp')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'voice')).toHaveLength(1);
  });

  it('the same key with a different body is 422 idempotency_key_reused', async () => {
    const { token } = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, token);
    expect((await api('POST', '/sms/send', sms(['12025550100'], 'one'), key('k'))).status).toBe(202);
    const reused = await api('POST', '/sms/send', sms(['12025550100'], 'two'), key('k'));
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('idempotency_key_reused');
    // ...also across operations.
    expect((await api('POST', '/otp/send', { recipient: '12025550100' }, key('k'))).body.code).toBe(
      'idempotency_key_reused',
    );
  });

  it('keys are per account', async () => {
    const a = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    const b = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    const first = await a('POST', '/sms/send', sms(['12025550100']), key('shared'));
    const other = await b('POST', '/sms/send', sms(['12025550100']), key('shared'));
    expect(other.status).toBe(202);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(other.body.data.campaign_id).not.toBe(first.body.data.campaign_id);
  });

  it('a failed request releases its key: after a top-up the same key sends', async () => {
    const { accountId, token } = await t.newAccount({ balance: 0 });
    const api = apiFor(t.sandbox.baseUrl, token);
    expect((await api('POST', '/sms/send', sms(['12025550100']), key('later'))).status).toBe(402);
    await t.admin.credit(accountId, 100);
    const sent = await api('POST', '/sms/send', sms(['12025550100']), key('later'));
    expect(sent.status).toBe(202);
    expect(sent.headers.get('idempotent-replayed')).toBeNull();
  });

  it('concurrent sends with different keys never spend the same money twice', async () => {
    const { token } = await t.newAccount({ balance: 3 });
    const api = apiFor(t.sandbox.baseUrl, token);
    const replies = await Promise.all(
      ['a', 'b', 'c'].map((k) => api('POST', '/sms/send', sms(['12025550100']), key(k))),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([202, 402, 402]);
  });

  it('rejects an unusable key with 422', async () => {
    const { token } = await t.newAccount();
    const reply = await apiFor(t.sandbox.baseUrl, token)(
      'POST',
      '/sms/send',
      sms(['12025550100']),
      key('x'.repeat(256)),
    );
    expect(reply.status).toBe(422);
    expect(reply.body.details[0].path).toBe('Idempotency-Key');
  });
});

describe('idempotency: in progress', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({ sendLatencyMs: 400 });
  });
  afterAll(() => t.close());

  it('rule 4: a concurrent duplicate while the first is in progress gets 409 idempotency_in_progress', async () => {
    const { accountId, token } = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, token);
    const body = sms(['12025550100']);
    const [first, second] = await Promise.all([
      api('POST', '/sms/send', body, key('dup')),
      new Promise((r) => setTimeout(r, 50)).then(() => api('POST', '/sms/send', body, key('dup'))),
    ]);
    expect(first.status).toBe(202);
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('idempotency_in_progress');
    const after = await api('POST', '/sms/send', body, key('dup'));
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect((await t.admin.ledger(accountId)).filter((e) => e.kind === 'sms')).toHaveLength(1);
  });
});

describe('idempotency: expiry', () => {
  const clock = manualClock();
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({ now: clock.now });
  });
  afterAll(() => t.close());

  it('keys expire after 24 hours', async () => {
    const { token } = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, token);
    const first = await api('POST', '/sms/send', sms(['12025550100']), key('daily'));
    clock.advance(24 * 60 * 60 * 1000 - 1);
    const replay = await api('POST', '/sms/send', sms(['12025550100']), key('daily'));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    clock.advance(1);
    const fresh = await api('POST', '/sms/send', sms(['12025550100']), key('daily'));
    expect(fresh.status).toBe(202);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(fresh.body.data.campaign_id).not.toBe(first.body.data.campaign_id);
  });
});
