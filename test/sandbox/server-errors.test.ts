/** The admin control that makes an account's API calls answer 500 for a while (a provider outage). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { apiFor, sms } from './helpers.js';

describe('injected server errors', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox();
  });
  afterAll(() => t.close());

  it("answers the account's calls 500 before doing anything, other accounts as usual, until the time is up", async () => {
    const failing = await t.newAccount({ balance: 100 });
    const other = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, failing.token);
    await t.admin.setServerErrors(failing.accountId, 60_000);

    const refused = await api('POST', '/sms/send', sms(['2348012345670'], 'hi'));
    expect(refused.status).toBe(500);
    expect(refused.body.code).toBe('internal_error');
    expect((await api('GET', '/balance')).status).toBe(500);
    expect((await apiFor(t.sandbox.baseUrl, other.token)('GET', '/balance')).status).toBe(200);
    // Nothing was sent or charged.
    expect(await t.admin.inbox('2348012345670')).toEqual([]);
    expect((await t.admin.ledger(failing.accountId)).filter((e) => e.kind === 'sms')).toEqual([]);

    await t.admin.setServerErrors(failing.accountId, 0);
    expect((await api('POST', '/sms/send', sms(['2348012345670'], 'hi'))).status).toBe(202);
  });

  it('ends by itself after its duration', async () => {
    const account = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, account.token);
    await t.admin.setServerErrors(account.accountId, 150);
    expect((await api('GET', '/balance')).status).toBe(500);
    await new Promise((r) => setTimeout(r, 200));
    expect((await api('GET', '/balance')).status).toBe(200);
  });

  it('refuses a duration that is not whole milliseconds within an hour', async () => {
    const account = await t.newAccount();
    for (const duration of [-1, 1.5, 3_600_001])
      await expect(t.admin.setServerErrors(account.accountId, duration)).rejects.toMatchObject({ status: 422 });
  });
});
