/** The carrier simulator: magic numbers, queued → sent → final, configurable delays, campaign progress. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessageRecord } from '../../src/api/sms.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type ApiCaller, apiFor, eventually, manualClock, sms } from './helpers.js';

const settle = () => new Promise((resolve) => setTimeout(resolve, 100)); // several carrier ticks at 10 ms

describe('carrier', () => {
  let t: TestSandbox;
  let api: ApiCaller;
  beforeAll(async () => {
    t = await startTestSandbox();
    api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
  });
  afterAll(() => t.close());

  it('uses exactly the documented magic numbers', () => {
    expect(MAGIC_NUMBERS).toMatchObject({
      undelivered: '12025550101',
      failed: '12025550102',
      rejected: '12025550103',
      expired: '12025550104',
      neverFinal: '12025550105',
    });
  });

  it('each magic number ends in its state through queued → sent; every other number is delivered', async () => {
    const expected: Record<string, string> = {
      '12025550100': 'delivered',
      '2348012345678': 'delivered',
      [MAGIC_NUMBERS.undelivered]: 'undelivered',
      [MAGIC_NUMBERS.failed]: 'failed',
      [MAGIC_NUMBERS.rejected]: 'rejected',
      [MAGIC_NUMBERS.expired]: 'expired',
    };
    const sent = (await api('POST', '/sms/send', sms(Object.keys(expected)))).body.data;
    expect(sent.messages.every((m: { status: string }) => m.status === 'queued')).toBe(true);
    for (const { provider_message_id: id, mobile_number } of sent.messages) {
      const final = await eventually(
        () => api('GET', `/messages/${id}`),
        (r) => r.body.data.status !== 'queued' && r.body.data.status !== 'sent',
      );
      const record = MessageRecord.parse(final.body.data);
      expect(record.status).toBe(expected[mobile_number.slice(1)]);
      expect(record.history!.map((h) => h.status)).toEqual(['queued', 'sent', record.status]);
    }
    const campaign = (await api('GET', `/campaigns/${sent.campaign_id}`)).body.data;
    expect(campaign.status).toBe('completed');
    expect(campaign.counts).toEqual({ delivered: 2, undelivered: 1, failed: 1, rejected: 1, expired: 1 });
  });

  it(`${MAGIC_NUMBERS.neverFinal} stays sent while the rest of its campaign finishes`, async () => {
    const sent = (await api('POST', '/sms/send', sms([MAGIC_NUMBERS.neverFinal, '12025550100']))).body.data;
    const [never, normal] = sent.messages.map((m: { provider_message_id: string }) => m.provider_message_id);
    await eventually(
      () => api('GET', `/messages/${normal}`),
      (r) => r.body.data.status === 'delivered',
    );
    await settle();
    const stuck = (await api('GET', `/messages/${never}`)).body.data;
    expect(stuck.status).toBe('sent');
    expect((await api('GET', `/campaigns/${sent.campaign_id}`)).body.data).toMatchObject({
      status: 'sending',
      counts: { sent: 1, delivered: 1 },
    });
  });
});

describe('carrier timing', () => {
  const clock = manualClock();
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({ now: clock.now, carrier: { submitMs: 1_000, finalMs: 5_000 } });
  });
  afterAll(() => t.close());

  it('moves only when the configured delays have passed (timer loop over due rows)', async () => {
    const api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    const sent = (await api('POST', '/sms/send', sms(['12025550100']))).body.data;
    const id = sent.messages[0].provider_message_id;
    const status = async () => (await api('GET', `/messages/${id}`)).body.data.status;
    await settle();
    expect(await status()).toBe('queued');
    expect((await api('GET', `/campaigns/${sent.campaign_id}`)).body.data.status).toBe('queued');
    clock.advance(999);
    await settle();
    expect(await status()).toBe('queued');
    clock.advance(1);
    await eventually(status, (s) => s === 'sent');
    clock.advance(4_999);
    await settle();
    expect(await status()).toBe('sent');
    clock.advance(1);
    await eventually(status, (s) => s === 'delivered');
    const history = (await api('GET', `/messages/${id}`)).body.data.history;
    const at = history.map((h: { at: string }) => Date.parse(h.at) - Date.parse(history[0].at));
    expect(at).toEqual([0, 1_000, 6_000]);
  });
});
