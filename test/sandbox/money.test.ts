/** Wallet, prices, SMS cost = recipients × segments × price, 402, spend cap (403, monthly UTC), ledger. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Balance, Pricing } from '../../src/api/account.js';
import { countSegments } from '../../src/api/segments.js';
import { SmsSendResult } from '../../src/api/sms.js';
import { DEFAULT_PRICES } from '../../src/sandbox/index.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { apiFor, manualClock, sms } from './helpers.js';

const price = DEFAULT_PRICES.sms_segment;

describe('money', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox();
  });
  afterAll(() => t.close());

  it('charges recipients × segments × price, reports cost and one provider_message_id per recipient', async () => {
    const { accountId, token } = await t.newAccount({ balance: 10_000 });
    const api = apiFor(t.sandbox.baseUrl, token);
    const text = 'x'.repeat(161); // two GSM-7 segments
    const recipients = ['12025550100', '12025550110', '2348012345678'];
    const reply = await api('POST', '/sms/send', sms(recipients, text));
    expect(reply.status).toBe(202);
    const result = SmsSendResult.parse(reply.body.data);
    expect(result.segments).toBe(2);
    expect(result.encoding).toBe('GSM-7');
    expect(result.cost).toBe(3 * 2 * price);
    expect(result.messages.map((m) => m.mobile_number)).toEqual(recipients.map((r) => `+${r}`));
    expect(new Set(result.messages.map((m) => m.provider_message_id)).size).toBe(3);

    const balance = Balance.parse((await api('GET', '/balance')).body.data);
    expect(typeof balance.balance).toBe('number');
    expect(balance.balance).toBe(10_000 - result.cost);
    expect(balance.spent_this_month).toBe(result.cost);

    const charges = (await t.admin.ledger(accountId)).filter((e) => e.kind === 'sms');
    expect(charges.map((c) => c.reference).sort()).toEqual(result.messages.map((m) => m.provider_message_id).sort());
    expect(charges.every((c) => c.amount === 2 * price)).toBe(true);
    expect(charges.at(-1)!.balance_after).toBe(balance.balance);
  });

  it('counts UCS-2 segments with countSegments from src/api', async () => {
    const { token } = await t.newAccount();
    const text = 'Grüße 👋 '.repeat(10);
    const expected = countSegments(text);
    expect(expected.encoding).toBe('UCS-2');
    const result = (
      await apiFor(t.sandbox.baseUrl, token)('POST', '/sms/send', sms(['12025550100', '12025550111'], text))
    ).body.data;
    expect(result.encoding).toBe('UCS-2');
    expect(result.segments).toBe(expected.segments);
    expect(result.cost).toBe(2 * expected.segments * price);
  });

  it('402 insufficient_balance when short; nothing is sent or charged', async () => {
    const { accountId, token } = await t.newAccount({ balance: 2 * price - 1 });
    const api = apiFor(t.sandbox.baseUrl, token);
    const reply = await api('POST', '/sms/send', sms(['12025550100', '12025550111']));
    expect(reply.status).toBe(402);
    expect(reply.body.code).toBe('insufficient_balance');
    expect((await api('GET', '/balance')).body.data.balance).toBe(2 * price - 1);
    expect((await api('GET', '/messages')).body.data).toEqual([]);
    expect((await t.admin.ledger(accountId)).filter((e) => e.kind !== 'credit')).toEqual([]);
    // Exactly enough is fine.
    await t.admin.credit(accountId, 1);
    expect((await api('POST', '/sms/send', sms(['12025550100', '12025550111']))).status).toBe(202);
    expect((await api('GET', '/balance')).body.data.balance).toBe(0);
  });

  it('every charged operation is priced from the price list and written to the ledger', async () => {
    const { accountId, token } = await t.newAccount({ balance: 1000 });
    const api = apiFor(t.sandbox.baseUrl, token);
    const pricing = Pricing.parse((await api('GET', '/pricing')).body.data);
    expect(pricing).toEqual({ currency: 'USD', prices: DEFAULT_PRICES });
    expect((await api('POST', '/otp/send', { recipient: '12025550100' })).body.data.cost).toBe(DEFAULT_PRICES.otp);
    expect((await api('POST', '/voice/send', { recipient: '12025550100', message: 'Hi' })).body.data.cost).toBe(
      DEFAULT_PRICES.voice_call,
    );
    expect((await api('POST', '/lookup', { number: '12025550100' })).body.data.cost).toBe(DEFAULT_PRICES.lookup);
    expect((await api('POST', '/email/verify', { email: 'ada@example.com' })).body.data.cost).toBe(
      DEFAULT_PRICES.email_verification,
    );
    const ledger = await t.admin.ledger(accountId);
    expect(ledger.map((e) => [e.kind, e.amount])).toEqual([
      ['credit', 1000],
      ['otp', DEFAULT_PRICES.otp],
      ['voice', DEFAULT_PRICES.voice_call],
      ['lookup', DEFAULT_PRICES.lookup],
      ['email_verification', DEFAULT_PRICES.email_verification],
    ]);
    const spent = ledger.slice(1).reduce((sum, e) => sum + e.amount, 0);
    expect((await api('GET', '/balance')).body.data.balance).toBe(1000 - spent);
  });

  it('422 sender_not_approved costs nothing', async () => {
    const { accountId, token } = await t.newAccount();
    const reply = await apiFor(t.sandbox.baseUrl, token)('POST', '/sms/send', sms(['12025550100'], 'hi', 'OTHER'));
    expect(reply.status).toBe(422);
    expect(reply.body.code).toBe('sender_not_approved');
    expect((await t.admin.ledger(accountId)).length).toBe(1);
  });
});

describe('spend cap', () => {
  const clock = manualClock(Date.UTC(2026, 0, 31, 23, 59, 0));
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({ now: clock.now });
  });
  afterAll(() => t.close());

  it('403 spend_cap_exceeded when a charge would pass the monthly (UTC) cap; a new month starts afresh', async () => {
    const { accountId, token } = await t.newAccount({ balance: 10_000 });
    const api = apiFor(t.sandbox.baseUrl, token);
    await t.admin.setSpendCap(accountId, 2 * price);
    expect((await api('POST', '/sms/send', sms(['12025550100']))).status).toBe(202);
    expect((await api('POST', '/sms/send', sms(['12025550100']))).status).toBe(202);
    const blocked = await api('POST', '/sms/send', sms(['12025550100']));
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe('spend_cap_exceeded');
    expect((await api('GET', '/balance')).body.data).toMatchObject({
      balance: 10_000 - 2 * price,
      spend_cap: 2 * price,
      spent_this_month: 2 * price,
    });

    clock.set(Date.UTC(2026, 1, 1, 0, 0, 1)); // 1 February, UTC
    expect((await api('GET', '/balance')).body.data.spent_this_month).toBe(0);
    expect((await api('POST', '/sms/send', sms(['12025550100']))).status).toBe(202);
    expect((await api('POST', '/sms/send', sms(['12025550100', '12025550111']))).body.code).toBe('spend_cap_exceeded');

    await t.admin.setSpendCap(accountId, null);
    expect((await api('POST', '/sms/send', sms(['12025550100', '12025550111']))).status).toBe(202);
    expect((await api('GET', '/balance')).body.data.spend_cap).toBeNull();
  });
});

describe('configured prices', () => {
  it('the price list is configurable', async () => {
    const t = await startTestSandbox({ prices: { sms_segment: 7 } });
    try {
      const { token } = await t.newAccount();
      const api = apiFor(t.sandbox.baseUrl, token);
      expect((await api('GET', '/pricing')).body.data.prices).toEqual({ ...DEFAULT_PRICES, sms_segment: 7 });
      expect((await api('POST', '/sms/send', sms(['12025550100', '12025550111']))).body.data.cost).toBe(14);
    } finally {
      await t.close();
    }
  });
});
