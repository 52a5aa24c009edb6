/**
 * An OTP session's state and every transition it makes, as pure functions over a plain object: the workflow
 * (otp.ts) decides when each happens, these decide what it does. Times are epoch milliseconds from the
 * workflow's clock, passed in, so the rules are unit-tested without a workflow.
 */
import { OTP_DEFAULTS, PROVIDER_OTP_TTL } from '../src/api/constants.js';
import type {
  OtpChannelAttempt,
  OtpSendAnswer,
  OtpState,
  OtpVerificationInput,
  OtpVerificationResult,
  OtpVerifyAnswer,
} from '../src/api/otp-io.js';
import { isOtpVerifyUpdate, OTP_REJECTIONS, sealedCodeLength } from '../src/definitions/otp.js';
import type { CheckedOtpCode, SentOtp } from '../activities/otp.js';

export type OtpSettings = ReturnType<typeof otpSettings>;

/** The input with msgflow's defaults filled in, and the lifetimes in milliseconds. */
export function otpSettings(input: OtpVerificationInput) {
  const settings = { ...OTP_DEFAULTS, ...definedOnly(input) };
  return {
    ...settings,
    ttlMs: settings.ttlSeconds * 1000,
    cooldownMs: settings.resendCooldownSeconds * 1000,
    lockoutMs: settings.lockoutSeconds * 1000,
    channelTimeoutMs: settings.channelTimeoutSeconds * 1000,
    /** Asked of the provider: at least its minimum, so short session lifetimes (tests) work too. */
    providerTtlSeconds: Math.max(settings.ttlSeconds, PROVIDER_OTP_TTL.min),
  };
}

export interface OtpSession {
  status: OtpState['status'];
  sends: number;
  /** A send is waiting for the provider: a `send` update that arrives now joins it. */
  sendInFlight: boolean;
  /** The provider's id of the current code. */
  otpId: string | undefined;
  /** When the current code stops being accepted (0: no code yet). */
  expiresAt: number;
  lastSentAt: number;
  failedAttempts: number;
  /** When a lockout ends (0: never locked). */
  lockedUntil: number;
  verifiedAt: string | null;
  /** Failure type of the first send, when it failed. */
  failure: string | null;
  /** Every delivery of the session's codes, in order: each text, and each call reading a code out. */
  attempts: OtpChannelAttempt[];
}

export function newSession(): OtpSession {
  return {
    status: 'sending',
    sends: 0,
    sendInFlight: false,
    otpId: undefined,
    expiresAt: 0,
    lastSentAt: 0,
    failedAttempts: 0,
    lockedUntil: 0,
    verifiedAt: null,
    failure: null,
    attempts: [],
  };
}

/** A rejected update: its failure type (OTP_REJECTIONS) and a message for the caller. */
export interface Refusal {
  type: string;
  message: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export const isFinished = (session: OtpSession): boolean =>
  session.status === 'verified' || session.status === 'expired' || session.status === 'failed';

export const sendsRemaining = (session: OtpSession, settings: OtpSettings): number =>
  Math.max(0, settings.maxSends - session.sends);

export const attemptsRemaining = (session: OtpSession, settings: OtpSettings): number =>
  Math.max(0, settings.maxAttempts - session.failedAttempts);

/** What the `otpState` query answers. */
export function stateOf(session: OtpSession, settings: OtpSettings): OtpState {
  const { status, sends, expiresAt, lastSentAt, lockedUntil } = session;
  return {
    status,
    sends,
    sendsRemaining: sendsRemaining(session, settings),
    attemptsRemaining: attemptsRemaining(session, settings),
    expiresAt: expiresAt ? iso(expiresAt) : null,
    resendAvailableAt:
      sends > 0 && sendsRemaining(session, settings) > 0 ? iso(lastSentAt + settings.cooldownMs) : null,
    lockedUntil: lockedUntil ? iso(lockedUntil) : null,
    channelAttempts: session.attempts.map((a) => ({ ...a })),
  };
}

export function sendAnswerOf(
  session: OtpSession,
  settings: OtpSettings,
  workflowId: string,
  status: OtpSendAnswer['status'],
): OtpSendAnswer {
  const { sends, sendsRemaining, expiresAt, resendAvailableAt, lockedUntil } = stateOf(session, settings);
  return { workflowId, status, sends, sendsRemaining, expiresAt, resendAvailableAt, lockedUntil };
}

/** The `send` update's validator: what the state already refuses, before anything is recorded. */
export function sendRefusal(session: OtpSession, settings: OtpSettings, now: number): Refusal | null {
  if (session.status === 'locked')
    return { type: OTP_REJECTIONS.locked, message: 'too many wrong codes: sending is locked' };
  if (isFinished(session)) return { type: OTP_REJECTIONS.finished, message: 'this OTP session has ended' };
  if (session.status === 'sending' || session.sendInFlight) return null; // joins the send in flight
  if (sendsRemaining(session, settings) === 0)
    return { type: OTP_REJECTIONS.sendLimit, message: 'no sends left in this session' };
  if (now < session.lastSentAt + settings.cooldownMs)
    return { type: OTP_REJECTIONS.cooldown, message: 'too soon after the last send' };
  return null;
}

/**
 * What an accepted resend does once it holds the lock (the state may have moved while it waited): answer
 * `sent` when it joined a send that has since completed, answer from the state, or `send` a new code.
 * `joinedAt`: the send count when it arrived during a send in flight.
 */
export function resendDecision(
  session: OtpSession,
  settings: OtpSettings,
  now: number,
  joinedAt: number | undefined,
): OtpSendAnswer['status'] | 'finished' | 'send' {
  if (joinedAt !== undefined && session.sends > joinedAt) return 'sent';
  if (session.status === 'locked') return 'locked';
  if (isFinished(session)) return 'finished';
  if (sendsRemaining(session, settings) === 0) return 'limit_reached';
  if (now < session.lastSentAt + settings.cooldownMs) return 'cooldown';
  return 'send';
}

/** The provider took a code: it replaces the previous one, and the session's lifetime restarts. */
export function codeSent(session: OtpSession, settings: OtpSettings, sent: SentOtp, now: number): void {
  session.sends += 1;
  session.otpId = sent.otpId;
  session.lastSentAt = now;
  // The session's lifetime, not the provider's (which may be longer: see PROVIDER_OTP_TTL).
  session.expiresAt = Math.min(Date.parse(sent.expiresAt), now + settings.ttlMs);
  if (session.status === 'sending') session.status = 'pending';
  channelAttempted(session, 'sms', sent.providerMessageId, 'sent', now);
}

/** A delivery of the current code: a text (`sent`), a call (`placed`), or one refused (its failure type). */
export function channelAttempted(
  session: OtpSession,
  channel: OtpChannelAttempt['channel'],
  id: string | null,
  outcome: string,
  now: number,
): OtpChannelAttempt {
  const attempt = { channel, id, send: session.sends, outcome, at: iso(now) };
  session.attempts.push(attempt);
  return attempt;
}

/** A text's final status was heard (the first one for it: the caller keeps FirstOutcomes); its attempt records it. */
export function textSettled(session: OtpSession, providerMessageId: string, status: string): OtpChannelAttempt | null {
  // Outcomes come for texts only, and a call's id is never a message's.
  const attempt = session.attempts.find((a) => a.id === providerMessageId);
  if (!attempt) return null;
  attempt.outcome = status;
  return attempt;
}

/** The session's call reached its final state (polled: voice has no events); its attempt records it. */
export function callSettled(session: OtpSession, callId: string, status: string): OtpChannelAttempt | null {
  const attempt = session.attempts.find((a) => a.channel === 'voice' && a.id === callId);
  if (!attempt) return null;
  attempt.outcome = status;
  return attempt;
}

/** The first of the session's channels not used yet, if any: each channel delivers at most once. */
export function nextChannel(session: OtpSession, settings: OtpSettings): OtpChannelAttempt['channel'] | null {
  return settings.channels.find((channel) => !session.attempts.some((a) => a.channel === channel)) ?? null;
}

/**
 * When the next channel is due (ms since the epoch), or null when none will be (no channel left, or the
 * session is no longer waiting for a code). The current code's text decides: not delivered, at once;
 * delivered or not heard of yet, `channelTimeoutMs` after it was sent.
 */
export function fallbackDueAt(session: OtpSession, settings: OtpSettings): number | null {
  if (session.status !== 'pending' || nextChannel(session, settings) === null) return null;
  // While a channel is left, the latest delivery is the current code's text (the call uses up the last one).
  const text = session.attempts[session.attempts.length - 1];
  if (!text) return null;
  if (text.outcome !== 'sent' && text.outcome !== 'delivered') return session.lastSentAt;
  return session.lastSentAt + settings.channelTimeoutMs;
}

/** A send failed: the first send's failure ends the session; a failed resend leaves it as it was. */
export function sendFailed(session: OtpSession, failureType: string): void {
  if (session.status !== 'sending') return;
  session.status = 'failed';
  session.failure = failureType;
}

/** The `verify` update's validator: a malformed or wrong-length code, or a session that cannot verify. */
export function verifyRefusal(session: OtpSession, settings: OtpSettings, request: unknown): Refusal | null {
  if (!isOtpVerifyUpdate(request)) return { type: OTP_REJECTIONS.invalidArgument, message: 'expected { sealedCode }' };
  if (sealedCodeLength(request.sealedCode) !== settings.length) {
    return { type: OTP_REJECTIONS.wrongLength, message: `codes of this session have ${settings.length} digits` };
  }
  if (session.status === 'locked') return { type: OTP_REJECTIONS.locked, message: 'too many wrong codes' };
  if (isFinished(session)) return { type: OTP_REJECTIONS.finished, message: 'this OTP session has ended' };
  return null;
}

const verifyAnswer = (session: OtpSession, settings: OtpSettings, status: OtpVerifyAnswer['status']) => ({
  status,
  attemptsRemaining: attemptsRemaining(session, settings),
});

/** A verification's answer when the state alone decides it (an expired code expires the session), or `check`. */
export function answerWithoutProvider(
  session: OtpSession,
  settings: OtpSettings,
  now: number,
): OtpVerifyAnswer | 'check' {
  if (session.status === 'verified') return verifyAnswer(session, settings, 'used');
  if (session.status === 'locked') return verifyAnswer(session, settings, 'locked');
  if (session.status !== 'pending' || !session.otpId) return verifyAnswer(session, settings, 'expired');
  if (now >= session.expiresAt) {
    session.status = 'expired';
    return verifyAnswer(session, settings, 'expired');
  }
  return 'check';
}

/** The provider checked a code: verified, a wrong code (too many lock the session), expired or used. */
export function codeChecked(
  session: OtpSession,
  settings: OtpSettings,
  checked: CheckedOtpCode,
  now: number,
): OtpVerifyAnswer {
  switch (checked.status) {
    case 'verified':
      session.status = 'verified';
      session.verifiedAt = iso(now);
      return verifyAnswer(session, settings, 'verified');
    case 'invalid':
      session.failedAttempts += 1;
      if (session.failedAttempts >= settings.maxAttempts) {
        lockSession(session, settings, now);
        return verifyAnswer(session, settings, 'locked');
      }
      return {
        status: 'invalid',
        attemptsRemaining: Math.min(attemptsRemaining(session, settings), checked.attemptsRemaining),
      };
    case 'locked':
      // The provider's own per-code limit ran out: the session locks too.
      session.failedAttempts += 1;
      lockSession(session, settings, now);
      return verifyAnswer(session, settings, 'locked');
    case 'expired':
      session.status = 'expired';
      return verifyAnswer(session, settings, 'expired');
    case 'used':
      // Verified earlier by someone other than this session: never a success here.
      return verifyAnswer(session, settings, 'used');
  }
}

function lockSession(session: OtpSession, settings: OtpSettings, now: number): void {
  session.status = 'locked';
  session.lockedUntil = now + settings.lockoutMs;
}

/** The code's timer fired: a pending session whose code is past its lifetime expires. */
export function expireIfDue(session: OtpSession, now: number): void {
  if (session.status === 'pending' && now >= session.expiresAt) session.status = 'expired';
}

/** The workflow's result, once the session has ended. */
export function resultOf(session: OtpSession): OtpVerificationResult {
  const { sends, failedAttempts, verifiedAt, failure, attempts } = session;
  return {
    status: session.status as OtpVerificationResult['status'],
    sends,
    failedAttempts,
    verifiedAt,
    failure,
    channelAttempts: attempts.map((a) => ({ ...a })),
  };
}

function definedOnly<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
