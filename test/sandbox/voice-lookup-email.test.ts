/** Voice calls (magic numbers onto VoiceStatus), number lookups (libphonenumber-js) and email verification (magic domains). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailVerification, Lookup } from '../../src/api/checks.js';
import { VoiceCall } from '../../src/api/voice.js';
import { EMAIL_MAGIC, MAGIC_NUMBERS, VOICE_MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type ApiCaller, apiFor, eventually, manualClock } from './helpers.js';

describe('voice', () => {
  const clock = manualClock();
  let t: TestSandbox;
  let api: ApiCaller;
  beforeAll(async () => {
    t = await startTestSandbox({ now: clock.now, carrier: { voiceStepMs: 1_000 } });
    api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
  });
  afterAll(() => t.close());

  const statusOf = async (id: string) => VoiceCall.parse((await api('GET', `/voice/${id}`)).body.data).status;
  const step = async (id: string, expected: string) => {
    clock.advance(1_000);
    await eventually(
      () => statusOf(id),
      (s) => s === expected,
    );
  };

  it('a call walks queued → ringing → in_progress → completed, with a duration', async () => {
    const sent = await api('POST', '/voice/send', {
      recipient: VOICE_MAGIC_NUMBERS.completed,
      message: 'Your parcel arrives today between nine and noon',
      repeat: 2,
    });
    expect(sent.status).toBe(200);
    const call = VoiceCall.parse(sent.body.data);
    expect(call).toMatchObject({
      status: 'queued',
      mobile_number: `+${VOICE_MAGIC_NUMBERS.completed}`,
      duration_seconds: 0,
    });
    await step(call.id, 'ringing');
    await step(call.id, 'in_progress');
    await step(call.id, 'completed');
    expect((await api('GET', `/voice/${call.id}`)).body.data.duration_seconds).toBe(2 * Math.ceil(9 / 2.5));
    expect((await t.admin.inbox(VOICE_MAGIC_NUMBERS.completed))[0]).toMatchObject({
      kind: 'voice',
      text: 'Your parcel arrives today between nine and noon',
    });
  });

  it('magic numbers end a call busy, no_answer or failed', async () => {
    const place = async (recipient: string) =>
      (await api('POST', '/voice/send', { recipient, message: 'Hi' })).body.data.id as string;
    const busy = await place(VOICE_MAGIC_NUMBERS.busy);
    const noAnswer = await place(VOICE_MAGIC_NUMBERS.no_answer);
    const failed = await place(VOICE_MAGIC_NUMBERS.failed);
    clock.advance(1_000);
    await eventually(
      () => statusOf(failed),
      (s) => s === 'failed',
    );
    await eventually(
      () => statusOf(busy),
      (s) => s === 'ringing',
    );
    clock.advance(1_000);
    await eventually(
      () => statusOf(busy),
      (s) => s === 'busy',
    );
    await eventually(
      () => statusOf(noAnswer),
      (s) => s === 'no_answer',
    );
    expect((await api('GET', `/voice/${failed}`)).body.data.duration_seconds).toBe(0);
  });

  it('404 for an unknown call; 422 for a bad request', async () => {
    expect((await api('GET', '/voice/call_unknown')).status).toBe(404);
    const bad = await api('POST', '/voice/send', { recipient: '12025550100', message: 'Hi', repeat: 9 });
    expect(bad.status).toBe(422);
    expect(bad.body.details[0].path).toBe('repeat');
  });
});

describe('lookup and email verification', () => {
  let t: TestSandbox;
  let api: ApiCaller;
  beforeAll(async () => {
    t = await startTestSandbox();
    api = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
  });
  afterAll(() => t.close());

  const lookup = async (number: string) => {
    const reply = await api('POST', '/lookup', { number });
    expect(reply.status).toBe(200);
    return Lookup.parse(reply.body.data);
  };

  it('answers from libphonenumber-js, deterministically', async () => {
    expect(await lookup('2348012345678')).toMatchObject({
      valid: true,
      e164: '+2348012345678',
      country: 'NG',
      line_type: 'mobile',
      reachable: true,
    });
    expect(await lookup('+1 (202) 555-0100')).toMatchObject({
      valid: true,
      e164: '+12025550100',
      country: 'US',
      reachable: true,
    });
    expect(await lookup('+44 20 7946 0958')).toMatchObject({ valid: true, country: 'GB', line_type: 'fixed_line' });
    expect(await lookup(MAGIC_NUMBERS.undelivered)).toMatchObject({ valid: true, reachable: false });
    expect(await lookup('12345')).toMatchObject({
      valid: false,
      e164: null,
      country: null,
      line_type: null,
      reachable: false,
    });
  });

  it('lists and fetches lookups', async () => {
    const made = await lookup('12025550150');
    expect((await api('GET', `/lookup/${made.id}`)).body.data).toEqual(made);
    expect((await api('GET', '/lookups')).body.data[0]).toEqual(made);
    expect((await api('GET', '/lookup/lkp_unknown')).status).toBe(404);
  });

  it('verifies email addresses with documented magic domains and mailboxes', async () => {
    const verify = async (email: string) =>
      EmailVerification.parse((await api('POST', '/email/verify', { email })).body.data);
    expect(await verify('ada@example.com')).toMatchObject({
      valid: true,
      result: 'deliverable',
      reason: null,
      disposable: false,
    });
    expect(await verify('ada@nowhere.invalid')).toMatchObject({
      valid: false,
      result: 'undeliverable',
      reason: 'no_mx_record',
    });
    expect(await verify(`ada@${EMAIL_MAGIC.disposableDomains[0]}`)).toMatchObject({
      valid: true,
      result: 'risky',
      reason: 'disposable',
      disposable: true,
    });
    expect(await verify('bounce@example.com')).toMatchObject({
      valid: false,
      result: 'undeliverable',
      reason: 'mailbox_not_found',
    });
    expect(await verify('not an email')).toMatchObject({
      valid: false,
      result: 'undeliverable',
      reason: 'invalid_syntax',
    });
    expect(await verify('a@b@example.com')).toMatchObject({ reason: 'invalid_syntax' });
  });
});
