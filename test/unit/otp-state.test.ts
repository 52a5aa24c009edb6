/** The OTP session's transitions (workflows/otp-state.ts) without a workflow: sends, verifying, expiry, lockout. */
import { describe, expect, it } from 'vitest';
import { OTP_REJECTIONS } from '../../src/definitions/otp.js';
import {
  answerWithoutProvider,
  callSettled,
  channelAttempted,
  codeChecked,
  codeSent,
  expireIfDue,
  fallbackDueAt,
  newSession,
  nextChannel,
  type OtpSession,
  otpSettings,
  resendDecision,
  resultOf,
  sendAnswerOf,
  sendFailed,
  sendRefusal,
  stateOf,
  textSettled,
  verifyRefusal,
} from '../../workflows/otp-state.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const settings = otpSettings({ purpose: 'login', recipient: '+12025550100', ttlSeconds: 60 });
/** A sealed code of `digits` digits: `v1.<key>.` then base64url of iv(12) + ciphertext + tag(16). */
const sealed = (digits: number) => `v1.k1.${'A'.repeat(Math.ceil(((12 + digits + 16) * 4) / 3))}`;

/** A session whose first code went out at `at`, valid for the session's lifetime. */
function pendingSession(at = T0): OtpSession {
  const session = newSession();
  codeSent(session, settings, { otpId: 'otp_1', providerMessageId: 'msg_1', expiresAt: iso(at + 3_600_000) }, at);
  return session;
}
const iso = (ms: number) => new Date(ms).toISOString();

describe('otp settings', () => {
  it('fill in the defaults, keep what the input sets, and ask the provider for at least its minimum lifetime', () => {
    expect(settings).toMatchObject({ length: 6, maxAttempts: 5, maxSends: 3, ttlMs: 60_000, cooldownMs: 30_000 });
    expect(otpSettings({ purpose: 'p', recipient: '+12025550100', ttlSeconds: 5 }).providerTtlSeconds).toBe(30);
    expect(otpSettings({ purpose: 'p', recipient: '+12025550100', length: undefined }).length).toBe(6);
  });
});

describe('sending', () => {
  it('a new session is sending, with every send and attempt left', () => {
    expect(stateOf(newSession(), settings)).toEqual({
      status: 'sending',
      sends: 0,
      sendsRemaining: 3,
      attemptsRemaining: 5,
      expiresAt: null,
      resendAvailableAt: null,
      lockedUntil: null,
      channelAttempts: [],
    });
  });

  it('the first code makes it pending, its lifetime capped by the session (not the provider)', () => {
    const session = pendingSession();
    expect(session).toMatchObject({ status: 'pending', sends: 1, otpId: 'otp_1', expiresAt: T0 + 60_000 });
    expect(sendAnswerOf(session, settings, 'otp:login:x', 'sent')).toEqual({
      workflowId: 'otp:login:x',
      status: 'sent',
      sends: 1,
      sendsRemaining: 2,
      expiresAt: iso(T0 + 60_000),
      resendAvailableAt: iso(T0 + 30_000),
      lockedUntil: null,
    });
  });

  it('a failed first send ends the session with its failure type; a failed resend changes nothing', () => {
    const first = newSession();
    sendFailed(first, 'InsufficientBalance');
    expect(resultOf(first)).toEqual({
      status: 'failed',
      sends: 0,
      failedAttempts: 0,
      verifiedAt: null,
      failure: 'InsufficientBalance',
      channelAttempts: [],
    });
    const resend = pendingSession();
    sendFailed(resend, 'InsufficientBalance');
    expect(resend).toMatchObject({ status: 'pending', failure: null });
  });

  it('refuses a resend during the cooldown and past the send limit, and joins a send in flight', () => {
    const session = pendingSession();
    expect(sendRefusal(session, settings, T0 + 29_999)?.type).toBe(OTP_REJECTIONS.cooldown);
    expect(sendRefusal(session, settings, T0 + 30_000)).toBeNull();
    session.sendInFlight = true;
    expect(sendRefusal(session, settings, T0 + 1)).toBeNull();
    session.sendInFlight = false;
    codeSent(session, settings, { otpId: 'otp_2', providerMessageId: 'm2', expiresAt: iso(T0 + 9e6) }, T0 + 30_000);
    codeSent(session, settings, { otpId: 'otp_3', providerMessageId: 'm3', expiresAt: iso(T0 + 9e6) }, T0 + 60_000);
    expect(sendRefusal(session, settings, T0 + 999_999)?.type).toBe(OTP_REJECTIONS.sendLimit);
    expect(stateOf(session, settings).resendAvailableAt).toBeNull();
  });

  it('decides an accepted resend again behind the lock, from the state it finds there', () => {
    const session = pendingSession();
    expect(resendDecision(session, settings, T0 + 30_000, undefined)).toBe('send');
    expect(resendDecision(session, settings, T0 + 10_000, undefined)).toBe('cooldown');
    expect(resendDecision(session, settings, T0 + 10_000, 0)).toBe('sent'); // joined the first send, now done
    session.status = 'locked';
    expect(resendDecision(session, settings, T0 + 30_000, undefined)).toBe('locked');
    session.status = 'verified';
    expect(resendDecision(session, settings, T0 + 30_000, undefined)).toBe('finished');
  });
});

describe('verifying', () => {
  it('refuses a malformed code, one of the wrong length, and a locked or finished session', () => {
    const session = pendingSession();
    expect(verifyRefusal(session, settings, { sealedCode: '123456' })?.type).toBe(OTP_REJECTIONS.invalidArgument);
    expect(verifyRefusal(session, settings, { sealedCode: sealed(4) })?.type).toBe(OTP_REJECTIONS.wrongLength);
    expect(verifyRefusal(session, settings, { sealedCode: sealed(6) })).toBeNull();
    session.status = 'locked';
    expect(verifyRefusal(session, settings, { sealedCode: sealed(6) })?.type).toBe(OTP_REJECTIONS.locked);
    session.status = 'expired';
    expect(verifyRefusal(session, settings, { sealedCode: sealed(6) })?.type).toBe(OTP_REJECTIONS.finished);
  });

  it('answers from the state when it can: used after success, expired past the code lifetime', () => {
    const session = pendingSession();
    expect(answerWithoutProvider(session, settings, T0 + 59_999)).toBe('check');
    expect(answerWithoutProvider(session, settings, T0 + 60_000)).toEqual({ status: 'expired', attemptsRemaining: 5 });
    expect(session.status).toBe('expired');
    const verified = pendingSession();
    codeChecked(verified, settings, { status: 'verified', attemptsRemaining: 4 }, T0 + 5_000);
    expect(answerWithoutProvider(verified, settings, T0 + 6_000)).toEqual({ status: 'used', attemptsRemaining: 5 });
    expect(answerWithoutProvider(newSession(), settings, T0)).toEqual({ status: 'expired', attemptsRemaining: 5 });
  });

  it('a right code verifies the session once, with the time it happened', () => {
    const session = pendingSession();
    expect(codeChecked(session, settings, { status: 'verified', attemptsRemaining: 4 }, T0 + 5_000)).toEqual({
      status: 'verified',
      attemptsRemaining: 5,
    });
    expect(resultOf(session)).toEqual({
      status: 'verified',
      sends: 1,
      failedAttempts: 0,
      verifiedAt: iso(T0 + 5_000),
      failure: null,
      channelAttempts: [{ channel: 'sms', id: 'msg_1', send: 1, outcome: 'sent', at: iso(T0) }],
    });
  });

  it('wrong codes count down the attempts (the lower of ours and the provider’s) and the last one locks', () => {
    const session = pendingSession();
    expect(codeChecked(session, settings, { status: 'invalid', attemptsRemaining: 2 }, T0)).toEqual({
      status: 'invalid',
      attemptsRemaining: 2,
    });
    for (let i = 2; i <= 4; i++) codeChecked(session, settings, { status: 'invalid', attemptsRemaining: 9 }, T0);
    expect(session.failedAttempts).toBe(4);
    expect(codeChecked(session, settings, { status: 'invalid', attemptsRemaining: 1 }, T0 + 1_000)).toEqual({
      status: 'locked',
      attemptsRemaining: 0,
    });
    expect(stateOf(session, settings)).toMatchObject({ status: 'locked', lockedUntil: iso(T0 + 1_000 + 900_000) });
  });

  it('locks when the provider locked the code, and never treats a code used elsewhere as success', () => {
    const locked = pendingSession();
    expect(codeChecked(locked, settings, { status: 'locked', attemptsRemaining: 0 }, T0).status).toBe('locked');
    expect(locked).toMatchObject({ status: 'locked', failedAttempts: 1, lockedUntil: T0 + 900_000 });
    const used = pendingSession();
    expect(codeChecked(used, settings, { status: 'used', attemptsRemaining: 3 }, T0).status).toBe('used');
    expect(used.status).toBe('pending');
    const expired = pendingSession();
    expect(codeChecked(expired, settings, { status: 'expired', attemptsRemaining: 3 }, T0).status).toBe('expired');
    expect(expired.status).toBe('expired');
  });
});

describe('expiry', () => {
  it('expires a pending session only once its code is past its lifetime', () => {
    const session = pendingSession();
    expireIfDue(session, T0 + 59_999);
    expect(session.status).toBe('pending');
    expireIfDue(session, T0 + 60_000);
    expect(session.status).toBe('expired');
    const verified = pendingSession();
    verified.status = 'verified';
    expireIfDue(verified, T0 + 999_999);
    expect(verified.status).toBe('verified');
  });
});

describe('each refusal and answer decided by the state alone', () => {
  /** A session in `status` whose code went out long ago: past the cooldown, sends left, a code on record. */
  const inState = (status: OtpSession['status'], changes: Partial<OtpSession> = {}): OtpSession => ({
    ...pendingSession(T0 - 3_600_000),
    status,
    ...changes,
  });

  it('refuses a send to a locked, then to each kind of finished session, naming why', () => {
    expect(sendRefusal(inState('locked'), settings, T0)).toEqual({
      type: OTP_REJECTIONS.locked,
      message: 'too many wrong codes: sending is locked',
    });
    for (const status of ['verified', 'expired', 'failed'] as const) {
      expect(sendRefusal(inState(status), settings, T0), status).toEqual({
        type: OTP_REJECTIONS.finished,
        message: 'this OTP session has ended',
      });
    }
    expect(sendRefusal(inState('pending', { sends: 3 }), settings, T0)).toEqual({
      type: OTP_REJECTIONS.sendLimit,
      message: 'no sends left in this session',
    });
    expect(sendRefusal(inState('pending', { lastSentAt: T0 - 1000 }), settings, T0)).toEqual({
      type: OTP_REJECTIONS.cooldown,
      message: 'too soon after the last send',
    });
  });

  it('lets a send join one in flight even with no sends left', () => {
    expect(sendRefusal(inState('pending', { sends: 3, sendInFlight: true }), settings, T0)).toBeNull();
    expect(sendRefusal(inState('sending', { sends: 3 }), settings, T0)).toBeNull();
  });

  it('answers a resend that joined a send only once that send completed', () => {
    const session = inState('pending', { sends: 2 });
    expect(resendDecision(session, settings, T0, 1)).toBe('sent');
    expect(resendDecision(session, settings, T0, 2)).toBe('send');
    expect(resendDecision(session, settings, T0, undefined)).toBe('send');
    expect(resendDecision(inState('pending', { sends: 3 }), settings, T0, undefined)).toBe('limit_reached');
  });

  it('refuses verifications of locked and finished sessions, naming why', () => {
    const request = { sealedCode: sealed(6) };
    expect(verifyRefusal(inState('pending'), settings, { code: '1' })).toEqual({
      type: OTP_REJECTIONS.invalidArgument,
      message: 'expected { sealedCode }',
    });
    expect(verifyRefusal(inState('pending'), settings, { sealedCode: sealed(4) })).toEqual({
      type: OTP_REJECTIONS.wrongLength,
      message: 'codes of this session have 6 digits',
    });
    expect(verifyRefusal(inState('locked'), settings, request)).toEqual({
      type: OTP_REJECTIONS.locked,
      message: 'too many wrong codes',
    });
    expect(verifyRefusal(inState('failed'), settings, request)).toEqual({
      type: OTP_REJECTIONS.finished,
      message: 'this OTP session has ended',
    });
  });

  it('answers a verification of a locked, failed or codeless session without the provider', () => {
    expect(answerWithoutProvider(inState('locked'), settings, T0)).toMatchObject({ status: 'locked' });
    expect(answerWithoutProvider(inState('failed'), settings, T0)).toMatchObject({ status: 'expired' });
    const codeless = { ...inState('pending'), otpId: undefined, expiresAt: T0 + 60_000 };
    expect(answerWithoutProvider(codeless, settings, T0)).toMatchObject({ status: 'expired' });
  });
});

describe('channels', () => {
  const withVoice = otpSettings({
    purpose: 'login',
    recipient: '+12025550100',
    ttlSeconds: 600,
    channels: ['sms', 'voice'],
    channelTimeoutSeconds: 30,
  });
  const pendingWithVoice = () => {
    const session = newSession();
    codeSent(session, withVoice, { otpId: 'otp_1', providerMessageId: 'msg_1', expiresAt: iso(T0 + 3_600_000) }, T0);
    return session;
  };

  it('an SMS-only session has no next channel and nothing ever falls due', () => {
    const session = pendingSession();
    expect(nextChannel(session, settings)).toBeNull();
    textSettled(session, 'msg_1', 'undelivered');
    expect(fallbackDueAt(session, settings)).toBeNull();
  });

  it('the call falls due channelTimeout after a text that is delivered or not heard of yet', () => {
    const session = pendingWithVoice();
    expect(nextChannel(session, withVoice)).toBe('voice');
    expect(fallbackDueAt(session, withVoice)).toBe(T0 + 30_000);
    textSettled(session, 'msg_1', 'delivered');
    expect(fallbackDueAt(session, withVoice)).toBe(T0 + 30_000);
  });

  it('a text that reached any other final state makes the call due at once', () => {
    for (const status of ['undelivered', 'failed', 'rejected', 'expired']) {
      const session = pendingWithVoice();
      expect(textSettled(session, 'msg_1', status)).toMatchObject({ channel: 'sms', outcome: status });
      expect(fallbackDueAt(session, withVoice), status).toBe(T0);
    }
  });

  it("a call's final state updates its attempt only; a text's id or an unknown call changes nothing", () => {
    const session = pendingWithVoice();
    channelAttempted(session, 'voice', 'call_1', 'placed', T0 + 30_000);
    expect(callSettled(session, 'msg_1', 'completed')).toBeNull();
    expect(callSettled(session, 'call_2', 'completed')).toBeNull();
    expect(callSettled(session, 'call_1', 'no_answer')).toMatchObject({ channel: 'voice', outcome: 'no_answer' });
    expect(stateOf(session, withVoice).channelAttempts?.map((a) => [a.channel, a.outcome])).toEqual([
      ['sms', 'sent'],
      ['voice', 'no_answer'],
    ]);
  });

  it('a resend restarts the wait on the new text; an outcome of the old text no longer decides', () => {
    const session = pendingWithVoice();
    codeSent(session, withVoice, { otpId: 'otp_2', providerMessageId: 'msg_2', expiresAt: iso(T0 + 9e6) }, T0 + 40_000);
    textSettled(session, 'msg_1', 'undelivered');
    expect(fallbackDueAt(session, withVoice)).toBe(T0 + 70_000);
    textSettled(session, 'msg_2', 'failed');
    expect(fallbackDueAt(session, withVoice)).toBe(T0 + 40_000);
    expect(stateOf(session, withVoice).channelAttempts).toEqual([
      { channel: 'sms', id: 'msg_1', send: 1, outcome: 'undelivered', at: iso(T0) },
      { channel: 'sms', id: 'msg_2', send: 2, outcome: 'failed', at: iso(T0 + 40_000) },
    ]);
  });

  it('each channel is used once: after the call (placed or refused) nothing more falls due', () => {
    for (const outcome of ['placed', 'OtpBlocked']) {
      const session = pendingWithVoice();
      channelAttempted(session, 'voice', outcome === 'placed' ? 'call_1' : null, outcome, T0 + 1_000);
      expect(nextChannel(session, withVoice)).toBeNull();
      expect(fallbackDueAt(session, withVoice)).toBeNull();
      expect(resultOf(session).channelAttempts?.[1]).toEqual({
        channel: 'voice',
        id: outcome === 'placed' ? 'call_1' : null,
        send: 1,
        outcome,
        at: iso(T0 + 1_000),
      });
    }
  });

  it('a session that is verified, locked, expired or failed never falls due', () => {
    for (const status of ['verified', 'locked', 'expired', 'failed'] as const) {
      const session = pendingWithVoice();
      textSettled(session, 'msg_1', 'undelivered');
      session.status = status;
      expect(fallbackDueAt(session, withVoice), status).toBeNull();
    }
  });

  it("an outcome for a message that is not one of the session's texts changes nothing", () => {
    const session = pendingWithVoice();
    expect(textSettled(session, 'msg_other', 'undelivered')).toBeNull();
    expect(fallbackDueAt(session, withVoice)).toBe(T0 + 30_000);
  });
});
