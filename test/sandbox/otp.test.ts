/** OTP send and verify: code only as a hash, masked in reports, clear in the inbox, attempts, lock, expiry. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtpSendResult, OtpVerifyResult } from '../../src/api/otp.js';
import { OTP_MAX_ATTEMPTS } from '../../src/api/constants.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type ApiCaller, apiFor, manualClock } from './helpers.js';

const codeIn = (text: string) => /\d{4,10}/.exec(text)![0];

describe('OTP', () => {
  const clock = manualClock();
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-otp-'));
  let t: TestSandbox;
  let api: ApiCaller;
  let accountId: string;
  beforeAll(async () => {
    t = await startTestSandbox({ now: clock.now, db: join(dir, 'otp.db') });
    const account = await t.newAccount({ senders: ['ACME'] });
    accountId = account.accountId;
    api = apiFor(t.sandbox.baseUrl, account.token);
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = async (body: Record<string, unknown>) => {
    const reply = await api('POST', '/otp/send', body);
    expect(reply.status).toBe(200);
    return OtpSendResult.parse(reply.body.data);
  };
  const verify = async (otp_id: string, code: string) => {
    const reply = await api('POST', '/otp/verify', { otp_id, code });
    expect(reply.status).toBe(200);
    return OtpVerifyResult.parse(reply.body.data);
  };

  it('sends the code as an otp message: clear in the inbox, masked in /messages, charged once', async () => {
    const sent = await send({ recipient: '12025550140' });
    expect(sent.expires_at).toBe(new Date(clock.now() + 600_000).toISOString().replace('Z', '+00:00'));
    const [entry] = await t.admin.inbox('12025550140');
    expect(entry!.kind).toBe('otp');
    expect(entry!.provider_message_id).toBe(sent.provider_message_id);
    const code = codeIn(entry!.text);
    expect(code).toHaveLength(6);
    const record = (await api('GET', `/messages/${sent.provider_message_id}`)).body.data;
    expect(record.kind).toBe('otp');
    expect(record.message).toContain('******');
    expect(record.message).not.toContain(code);
    expect((await t.admin.ledger(accountId)).filter((e) => e.kind === 'otp').map((e) => e.reference)).toContain(
      sent.provider_message_id,
    );

    // Only an HMAC of the code is kept with the OTP.
    const db = new Database(join(dir, 'otp.db'), { readonly: true });
    const row = db.prepare('SELECT * FROM otps WHERE id = ?').get(sent.otp_id) as Record<string, unknown>;
    db.close();
    expect(JSON.stringify(row)).not.toContain(code);
    expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('verifies once, then answers used', async () => {
    const sent = await send({ recipient: '12025550141' });
    const code = codeIn((await t.admin.inbox('12025550141'))[0]!.text);
    expect(await verify(sent.otp_id, code)).toEqual({
      otp_id: sent.otp_id,
      status: 'verified',
      attempts_remaining: OTP_MAX_ATTEMPTS,
    });
    expect((await verify(sent.otp_id, code)).status).toBe('used');
  });

  it(`a wrong code is invalid with the attempts left; the ${OTP_MAX_ATTEMPTS}th locks it, even for the right code`, async () => {
    const sent = await send({ recipient: '12025550142' });
    const code = codeIn((await t.admin.inbox('12025550142'))[0]!.text);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let left = OTP_MAX_ATTEMPTS - 1; left >= 1; left -= 1) {
      expect(await verify(sent.otp_id, wrong)).toMatchObject({ status: 'invalid', attempts_remaining: left });
    }
    expect(await verify(sent.otp_id, wrong)).toMatchObject({ status: 'locked', attempts_remaining: 0 });
    expect(await verify(sent.otp_id, code)).toMatchObject({ status: 'locked', attempts_remaining: 0 });
  });

  it('honours expires_in: the right code after expiry is expired', async () => {
    const sent = await send({ recipient: '12025550143', expires_in: 30 });
    expect(Date.parse(sent.expires_at) - clock.now()).toBe(30_000);
    const code = codeIn((await t.admin.inbox('12025550143'))[0]!.text);
    clock.advance(30_000);
    expect((await verify(sent.otp_id, code)).status).toBe('expired');
  });

  it('takes length, template and an approved sender', async () => {
    const sent = await send({ recipient: '12025550144', length: 8, template: 'ACME code: {code}', sender: 'ACME' });
    const [entry] = await t.admin.inbox('12025550144');
    expect(entry!.text).toMatch(/^ACME code: \d{8}$/);
    expect(entry!.sender).toBe('ACME');
    expect((await api('GET', `/messages/${sent.provider_message_id}`)).body.data.message).toBe('ACME code: ********');
    expect((await verify(sent.otp_id, codeIn(entry!.text))).status).toBe('verified');
  });

  it('refuses an unapproved sender, a template without {code}, and an unknown otp_id', async () => {
    expect((await api('POST', '/otp/send', { recipient: '12025550145', sender: 'NOPE' })).body.code).toBe(
      'sender_not_approved',
    );
    const noCode = await api('POST', '/otp/send', { recipient: '12025550145', template: 'no placeholder' });
    expect(noCode.status).toBe(422);
    expect(noCode.body.details[0].path).toBe('template');
    const unknown = await api('POST', '/otp/verify', { otp_id: 'otp_unknown', code: '123456' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    expect((await api('POST', '/otp/verify', { otp_id: 'otp_unknown', code: '12ab' })).status).toBe(422);
  });
});
