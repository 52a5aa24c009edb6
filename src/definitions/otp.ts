/**
 * The OTP workflow's updates, query and rejection types, shared by the workflow and the starter. Pure: safe
 * inside the workflow sandbox.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { SEALED_CODE_PATTERN } from '../api/constants.js';
import type { OtpSendAnswer, OtpState, OtpVerifyAnswer, OtpVerifyUpdate } from '../api/otp-io.js';

/** Sends the first code, or resends (subject to cooldown and limit). Answered once the provider accepted it. */
export const sendUpdate = defineUpdate<OtpSendAnswer, []>('send');
/** Checks one code (sealed) with the provider, one verification at a time. */
export const verifyUpdate = defineUpdate<OtpVerifyAnswer, [OtpVerifyUpdate]>('verify');
export const otpStateQuery = defineQuery<OtpState>('otpState');

/**
 * Failure types of rejected updates. A validator's rejection is not recorded in the history (so spamming
 * a locked or cooling-down session costs it nothing); the facade turns each into a plain answer.
 */
export const OTP_REJECTIONS = {
  /** Malformed update argument. */
  invalidArgument: 'OtpInvalidArgument',
  /** The code has a different number of digits than this session's codes. */
  wrongLength: 'OtpWrongCodeLength',
  cooldown: 'OtpResendCooldown',
  sendLimit: 'OtpSendLimitReached',
  locked: 'OtpLocked',
  /** The session has ended (verified, expired or failed) and is closing: start a new one. */
  finished: 'OtpSessionFinished',
} as const;

/**
 * Failure type of a `send` update whose send could not be made; details carry the provider's failure type
 * and, for OTP_SOURCE_RATE_LIMITED, the milliseconds the provider asked to wait (or null).
 */
export const OTP_SEND_FAILED = 'OtpSendFailed';

/** The fraud guard kept the send from the provider; details carry `{ reason, retryAfterMs }`. */
export const OTP_BLOCKED = 'OtpBlocked';

/** The provider's per-source-address OTP limit refused the send: answered at once, never waited out. */
export const OTP_SOURCE_RATE_LIMITED = 'OtpSourceRateLimited';

/**
 * The `OtpVerifyUpdate` schema's rule without zod (kept out of the workflow bundle): exactly `{ sealedCode }`,
 * a sealed code. A unit test holds the two to the same answers.
 */
export function isOtpVerifyUpdate(request: unknown): request is OtpVerifyUpdate {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return false;
  const { sealedCode, ...rest } = request as Record<string, unknown>;
  return Object.keys(rest).length === 0 && typeof sealedCode === 'string' && SEALED_CODE_PATTERN.test(sealedCode);
}

/**
 * Digits in a sealed code, read from its length alone (keyring.ts `sealString`: `v1.<keyId>.<base64url of
 * iv(12) ‖ ciphertext ‖ tag(16)>`, and AES-GCM ciphertext is as long as the plaintext). Lets the workflow
 * refuse a code of the wrong length without being able to read it.
 */
export function sealedCodeLength(sealed: string): number {
  const data = sealed.slice(sealed.lastIndexOf('.') + 1);
  return Math.floor((data.length * 3) / 4) - 12 - 16;
}
