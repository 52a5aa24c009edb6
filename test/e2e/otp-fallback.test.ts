/**
 * OTP channel fallback end to end: sessions with `channels: ['sms', 'voice']` through the facade, the real
 * sandbox over HTTP (its carrier reports each text's final status by signed webhook to the real ingress), the
 * message store and a real worker. The call comes at once after an undelivered text, after the channel timeout
 * after a delivered one, never for a session that was verified, locked or expired first, and the code it reads
 * out is the session's code. The session follows its call to the call's final state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxEntry } from '../../src/api/admin.js';
import type { OtpVerificationResult } from '../../src/api/otp-io.js';
import { followCallWorkflowId } from '../../src/definitions/workflow-ids.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const FALLBACK = { channels: ['sms', 'voice'] as ('sms' | 'voice')[] };

describe('OTP fallback from SMS to a voice call', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    stack = await startTestStack({ sandbox: { otpPerIpPerMinute: 10_000 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const calls = async (recipient: string) => (await stack.admin.inbox(recipient)).filter((e) => e.kind === 'voice');
  const texts = async (recipient: string) => (await stack.admin.inbox(recipient)).filter((e) => e.kind === 'otp');
  const resultOf = (workflowId: string) =>
    stack.temporal.workflow.getHandle(workflowId).result() as Promise<OtpVerificationResult>;
  /** Waits for the call to `recipient`; returns it with the text it followed. */
  async function callAndText(recipient: string) {
    const call = await waitFor(async () => (await calls(recipient))[0], 'the voice call', { timeoutMs: 30_000 });
    const [text] = await texts(recipient);
    return { call, text: text! };
  }
  const wrong = (code: string) => String((Number(code) + 1) % 10 ** code.length).padStart(code.length, '0');

  it('calls as soon as the text is reported undelivered, reading out the code that verifies', async () => {
    const recipient = MAGIC_NUMBERS.undelivered;
    const purpose = 'fallback-undelivered';
    // A channel timeout no test waits for: only the text's status can bring the call.
    const sent = await stack.msgflow.sendOtp({ purpose, recipient, ...FALLBACK, channelTimeoutSeconds: 3600 });
    const { call, text } = await callAndText(recipient);
    expect(call.code).toBe(text.code);

    // The text is registered as the session's, like any send, and its undelivered status came by webhook.
    const stored = await stack.store.message(text.provider_message_id);
    expect(stored?.final?.status).toBe('undelivered');
    expect(stored?.waiters.map((w) => w.workflowId)).toEqual([sent.workflowId]);
    const afterEventMs = Date.parse(call.created_at) - Date.parse(stored!.final!.timestamp);
    console.log(`[otp-fallback] call placed ${afterEventMs} ms after the text's undelivered event`);
    expect(afterEventMs).toBeGreaterThanOrEqual(0);

    expect((await stack.msgflow.verifyOtp({ purpose, recipient, code: call.code! })).status).toBe('verified');
    const result = await resultOf(sent.workflowId);
    expect(result.channelAttempts).toEqual([
      expect.objectContaining({ channel: 'sms', id: text.provider_message_id, send: 1, outcome: 'undelivered' }),
      expect.objectContaining({ channel: 'voice', id: call.provider_message_id, send: 1 }),
    ]);
    // The session closed at once, whether or not its call had ended (`placed` then): the call is followed to its
    // end all the same, and its final state reaches the store.
    expect(['placed', 'completed']).toContain(result.channelAttempts?.[1]?.outcome);
    const callFinal = await waitFor(
      async () => (await stack.store.message(call.provider_message_id))?.final ?? undefined,
      "the call's final state in the store",
      { timeoutMs: 30_000 },
    );
    expect(callFinal).toMatchObject({ status: 'completed', source: 'provider' });
    // The session no longer waits for its text once it has ended.
    expect((await stack.store.message(text.provider_message_id))?.waiters[0]?.releasedAt).not.toBeNull();
    const voiceCharges = (await stack.admin.ledger(stack.accountId!)).filter(
      (e) => e.kind === 'voice' && e.recipient === `+${recipient}`,
    );
    expect(voiceCharges).toHaveLength(1);
  });

  it('calls once the channel timeout has passed after a delivered text that was not verified', async () => {
    const recipient = '2348012399001';
    const purpose = 'fallback-timeout';
    const sent = await stack.msgflow.sendOtp({ purpose, recipient, ...FALLBACK, channelTimeoutSeconds: 2 });
    const { call, text } = await callAndText(recipient);
    expect(Date.parse(call.created_at) - Date.parse(text.created_at)).toBeGreaterThanOrEqual(2000);
    const state = await stack.msgflow.otpState({ purpose, recipient });
    // The call is `placed` until the session's poll sees it final (the sandbox ends it within moments).
    expect(state?.channelAttempts?.map((a) => a.channel)).toEqual(['sms', 'voice']);
    expect(state?.channelAttempts?.[0]?.outcome).toBe('delivered');
    expect(['placed', 'completed']).toContain(state?.channelAttempts?.[1]?.outcome);
    expect((await stack.msgflow.verifyOtp({ purpose, recipient, code: call.code! })).status).toBe('verified');
    expect((await resultOf(sent.workflowId)).status).toBe('verified');
  });

  it('never calls a session verified before the timeout', async () => {
    const recipient = '2348012399002';
    const purpose = 'fallback-verified';
    const sent = await stack.msgflow.sendOtp({ purpose, recipient, ...FALLBACK, channelTimeoutSeconds: 2 });
    const [text] = await texts(recipient);
    expect((await stack.msgflow.verifyOtp({ purpose, recipient, code: text!.code! })).status).toBe('verified');
    const result = await resultOf(sent.workflowId);
    expect(result.channelAttempts?.map((a) => a.channel)).toEqual(['sms']);
    // The session has closed, so nothing of it can call any more.
    expect(await calls(recipient)).toEqual([]);
  });

  it('never calls a session that locked, even when its text is undelivered afterwards', async () => {
    const recipient = '2348012399003';
    const purpose = 'fallback-locked';
    // The text's undelivered status comes 1.5 s after the send: by then the session is locked.
    await stack.admin.setOutcome(recipient, 'undelivered', 1500);
    const sent = await stack.msgflow.sendOtp({
      purpose,
      recipient,
      ...FALLBACK,
      channelTimeoutSeconds: 1,
      maxAttempts: 1,
      lockoutSeconds: 3,
    });
    const [text] = await texts(recipient);
    expect((await stack.msgflow.verifyOtp({ purpose, recipient, code: wrong(text!.code!) })).status).toBe('locked');
    // The lockout outlasts both the channel timeout and the text's status event.
    const result = await resultOf(sent.workflowId);
    expect(result.status).toBe('locked');
    expect(result.channelAttempts).toEqual([expect.objectContaining({ channel: 'sms', outcome: 'undelivered' })]);
    expect(await calls(recipient)).toEqual([]);
  });

  it('never calls a session whose code expired first', async () => {
    const recipient = '2348012399004';
    const sent = await stack.msgflow.sendOtp({
      purpose: 'fallback-expired',
      recipient,
      ...FALLBACK,
      ttlSeconds: 1,
      channelTimeoutSeconds: 2,
    });
    const result = await resultOf(sent.workflowId);
    expect(result.status).toBe('expired');
    expect(result.channelAttempts?.map((a) => a.channel)).toEqual(['sms']);
    expect(await calls(recipient)).toEqual([]);
  });

  it('calls only when the session names the voice channel', async () => {
    const recipient = MAGIC_NUMBERS.undelivered;
    const purpose = 'sms-only-undelivered';
    const sent = await stack.msgflow.sendOtp({ purpose, recipient, ttlSeconds: 2 });
    const result = await resultOf(sent.workflowId);
    expect(result.channelAttempts).toEqual([
      expect.objectContaining({ channel: 'sms', outcome: 'undelivered', send: 1 }),
    ]);
    const calledAfterSend = (await calls(recipient)).filter(
      (c: InboxEntry) => Date.parse(c.created_at) >= Date.parse(result.channelAttempts![0]!.at),
    );
    expect(calledAfterSend).toEqual([]);
  });

  it('refuses channels that do not start with sms or name one twice, before anything is sent', async () => {
    const recipient = '2348012399005';
    for (const channels of [['voice'], ['sms', 'sms'], []] as ('sms' | 'voice')[][]) {
      const error = await stack.msgflow
        .sendOtp({ purpose: 'fallback-bad', recipient, channels })
        .catch((e: unknown) => e);
      expect(error, JSON.stringify(channels)).toBeInstanceOf(InvalidWorkflowInputError);
    }
    expect(await stack.admin.inbox(recipient)).toEqual([]);
  });
});

describe('OTP fallback call still going when the session ends', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    // Each step of a call takes 2 s here: a call lasts about 6 s, well after its code was verified.
    stack = await startTestStack({ sandbox: { otpPerIpPerMinute: 10_000, carrier: { voiceStepMs: 2000 } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('the session closes without waiting for its call, the call is followed to its end, a new session starts at once', async () => {
    const recipient = MAGIC_NUMBERS.undelivered;
    const purpose = 'fallback-long-call';
    await stack.msgflow.sendOtp({ purpose, recipient, ...FALLBACK, channelTimeoutSeconds: 3600 });
    const call = await waitFor(
      async () => (await stack.admin.inbox(recipient)).find((e) => e.kind === 'voice'),
      'the voice call',
      { timeoutMs: 30_000 },
    );
    expect((await stack.msgflow.verifyOtp({ purpose, recipient, code: call.code! })).status).toBe('verified');
    // The person asks for a code again while the call is still going: a new session, at once (the facade
    // waits up to 2 s for a verified session to close; one waiting for its call would take seconds more).
    const second = await stack.msgflow.sendOtp({ purpose, recipient });
    expect(second.status).toBe('sent');
    expect(second.sends).toBe(1);
    // The first session's call reached its final state all the same, and the store holds it.
    const callFinal = await waitFor(
      async () => (await stack.store.message(call.provider_message_id))?.final ?? undefined,
      "the call's final state in the store",
      { timeoutMs: 30_000 },
    );
    expect(callFinal).toMatchObject({ status: 'completed', source: 'provider' });
    // Its follower, the session's abandoned child, is what followed it.
    const follower = stack.temporal.workflow.getHandle(followCallWorkflowId(call.provider_message_id));
    expect(await follower.result()).toEqual({ callId: call.provider_message_id, status: 'completed', final: true });
  });
});
