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

    // The OTP keeps an HMAC of the code (to verify) and the code sealed (to deliver it again), never the code.
    const db = new Database(join(dir, 'otp.db'), { readonly: true });
    const { code_sealed: sealed, ...row } = db.prepare('SELECT * FROM otps WHERE id = ?').get(sent.otp_id) as Record<
      string,
      unknown
    >;
    db.close();
    expect(JSON.stringify(row)).not.toContain(code);
    expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(sealed).toMatch(/^v1\.otp\.[\w-]+$/);
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

  it('reads a new code out in a call: the inbox shows the call and its code, charged as a voice call', async () => {
    const sent = await send({ recipient: '12025550146', channel: 'voice' });
    expect(sent.channel).toBe('voice');
    expect(sent).not.toHaveProperty('provider_message_id');
    const [entry] = await t.admin.inbox('12025550146');
    expect(entry).toMatchObject({ kind: 'voice', provider_message_id: sent.call_id });
    expect(entry!.text).toContain(entry!.code!);
    expect((await api('GET', `/voice/${sent.call_id}`)).body.data.id).toBe(sent.call_id);
    const charges = (await t.admin.ledger(accountId)).filter((e) => e.reference === sent.call_id);
    expect(charges.map((e) => e.kind)).toEqual(['voice']);
    expect((await verify(sent.otp_id, entry!.code!)).status).toBe('verified');
  });

  it('delivers the pending code of otp_id again in a call: the same code, expiry and attempts', async () => {
    const texted = await send({ recipient: '12025550147', expires_in: 120 });
    const textCode = codeIn((await t.admin.inbox('12025550147'))[0]!.text);
    expect((await verify(texted.otp_id, textCode === '000000' ? '111111' : '000000')).status).toBe('invalid');
    clock.advance(10_000);
    const called = await send({ recipient: '12025550147', channel: 'voice', otp_id: texted.otp_id });
    expect(called).toMatchObject({ otp_id: texted.otp_id, channel: 'voice', expires_at: texted.expires_at });
    const [call, text] = await t.admin.inbox('12025550147');
    expect(call).toMatchObject({ kind: 'voice', provider_message_id: called.call_id, code: textCode });
    expect(text).toMatchObject({ kind: 'otp', code: textCode });
    expect(await verify(texted.otp_id, textCode)).toMatchObject({
      status: 'verified',
      attempts_remaining: OTP_MAX_ATTEMPTS - 1,
    });
  });

  it('delivers again only a code that can still be verified, to the number it was sent to', async () => {
    const sent = await send({ recipient: '12025550148', expires_in: 30 });
    const again = (body: Record<string, unknown>) =>
      api('POST', '/otp/send', { recipient: '12025550148', channel: 'voice', otp_id: sent.otp_id, ...body });

    const elsewhere = await again({ recipient: '12025550149' });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.details).toEqual([{ path: 'recipient', message: 'is not the number this OTP was sent to' }]);
    const unknown = await again({ otp_id: 'otp_unknown' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);

    await verify(sent.otp_id, codeIn((await t.admin.inbox('12025550148'))[0]!.text));
    const verified = await again({});
    expect(verified.status).toBe(422);
    expect(verified.body.details[0]).toMatchObject({ path: 'otp_id', message: expect.stringContaining('(verified)') });

    const expiring = await send({ recipient: '12025550148', expires_in: 30 });
    clock.advance(30_000);
    const expired = await api('POST', '/otp/send', {
      recipient: '12025550148',
      channel: 'voice',
      otp_id: expiring.otp_id,
    });
    expect(expired.body.details[0]).toMatchObject({ path: 'otp_id', message: expect.stringContaining('(expired)') });
    // Nothing refused was placed or charged.
    expect((await t.admin.inbox('12025550148')).filter((e) => e.kind === 'voice')).toEqual([]);
    expect(
      (await t.admin.ledger(accountId)).filter((e) => e.kind === 'voice' && e.recipient === '+12025550148'),
    ).toEqual([]);
  });
});
