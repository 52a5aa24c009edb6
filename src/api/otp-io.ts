/**
 * msgflow's own contract for the OTP, voice-call and contact-check workflows: their inputs and results,
 * and what the facade's OTP calls take and answer. Like workflow-io.ts, this is the documented JSON for
 * backend services in other languages; the facade and the CLI validate with these schemas, and the
 * workflows' update validators use them too (so nothing here may do I/O).
 */
import { z } from 'zod';
import { EmailVerifyRequest, LookupRequest } from './checks.js';
import { Currency, Id, MinorUnits, RecipientNumber, SenderId } from './common.js';
import { CONTACT_CHECK_MAX, PROVIDER_OTP_TTL, SEALED_CODE_PATTERN } from './constants.js';
import { CHECK_CONTACTS_RULES, OTP_CHANNELS_RULES, refineWith } from './input-rules.js';
import { OtpChannel, OtpSendRequest, OtpVerifyRequest, OtpVerifyStatus } from './otp.js';
import { VoiceSendRequest, VoiceStatus } from './voice.js';

export {
  CONTACT_CHECK_DEFAULT_CONCURRENCY,
  CONTACT_CHECK_DEFAULT_PER_RUN,
  CONTACT_CHECK_MAX,
  OTP_DEFAULTS,
  PROVIDER_OTP_TTL,
  VOICE_CALL_DEFAULTS,
} from './constants.js';

// ---------------------------------------------------------------------------------------------------
// OTP: one `otpVerification` workflow per (purpose, recipient)
// ---------------------------------------------------------------------------------------------------

/** What the code is for ("login", "payment"); part of the workflow id, so ids stay readable. */
export const OtpPurpose = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'must be 1-32 lowercase letters, digits, _ or -, e.g. "login"');

/** Input of the `otpVerification` workflow (and of the facade's `sendOtp`). */
export const OtpVerificationInput = z.strictObject({
  purpose: OtpPurpose,
  recipient: RecipientNumber,
  sender: SenderId.optional(),
  template: OtpSendRequest.shape.template,
  /** Digits in the code. Default 6. */
  length: OtpSendRequest.shape.length.unwrap().optional(),
  /**
   * Lifetime of each code, restarted by a resend. Default 600 (10 minutes). The session's own timer
   * enforces it; the provider is asked for at least its minimum lifetime as a backstop, so short
   * lifetimes (tests) work too.
   */
  ttlSeconds: z.number().int().min(1).max(PROVIDER_OTP_TTL.max).optional(),
  /** Wrong codes allowed over the whole session (resends do not reset it) before it locks. Default 5. */
  maxAttempts: z.number().int().min(1).max(10).optional(),
  /** Minimum time between two sends. Default 30. */
  resendCooldownSeconds: z.number().int().min(0).max(3600).optional(),
  /** Sends allowed, the first included. Default 3. */
  maxSends: z.number().int().min(1).max(10).optional(),
  /** How long a locked session keeps refusing codes and new sends. Default 900 (15 minutes). */
  lockoutSeconds: z
    .number()
    .int()
    .min(0)
    .max(24 * 60 * 60)
    .optional(),
  /**
   * How the code reaches the person, in order: `["sms", "voice"]` calls the number and reads the code out when
   * the text is not delivered, or when `channelTimeoutSeconds` pass after it without a verification. Default
   * `["sms"]`. Each channel is used at most once per session.
   */
  channels: z.array(OtpChannel).min(1).superRefine(refineWith(OTP_CHANNELS_RULES)).optional(),
  /** How long after a delivered text the next channel waits for a verification. Default 30. */
  channelTimeoutSeconds: z.number().int().min(1).max(3600).optional(),
});
export type OtpVerificationInput = z.infer<typeof OtpVerificationInput>;

/** How a session ended. `failed`: no code could be sent (e.g. insufficient balance, sender not approved). */
export const OtpOutcome = z.enum(['verified', 'locked', 'expired', 'failed']);
export type OtpOutcome = z.infer<typeof OtpOutcome>;

/**
 * One delivery of a session's code. `outcome`: a text's final status once heard (`sent` until then), a call's
 * `placed`, or the failure type of a delivery the provider or the guard refused (e.g. `OtpBlocked`).
 */
export const OtpChannelAttempt = z.object({
  channel: OtpChannel,
  /** The text's provider_message_id or the call's id (GET /voice/{id}); null when it was refused. */
  id: z.string().nullable(),
  /** Which send's code it delivered (1 for the first code). */
  send: z.number().int().positive(),
  outcome: z.string(),
  /** When it was made (ISO 8601). */
  at: z.string(),
});
export type OtpChannelAttempt = z.infer<typeof OtpChannelAttempt>;

/** The workflow's result. Never holds the code or the number. */
export const OtpVerificationResult = z.object({
  status: OtpOutcome,
  sends: z.number().int().nonnegative(),
  /** Wrong codes entered. */
  failedAttempts: z.number().int().nonnegative(),
  verifiedAt: z.string().nullable(),
  /** Failure type of the send that failed (see FAILURE_TYPES), for `failed`. */
  failure: z.string().nullable(),
  /** Every delivery of the session's codes, in order (absent from sessions of earlier versions). */
  channelAttempts: z.array(OtpChannelAttempt).optional(),
});
export type OtpVerificationResult = z.infer<typeof OtpVerificationResult>;

/** The session's state, as the `otpState` query answers it (times are ISO 8601, UTC). */
export const OtpState = z.object({
  status: z.enum(['sending', 'pending', 'verified', 'locked', 'expired', 'failed']),
  sends: z.number().int().nonnegative(),
  sendsRemaining: z.number().int().nonnegative(),
  attemptsRemaining: z.number().int().nonnegative(),
  expiresAt: z.string().nullable(),
  resendAvailableAt: z.string().nullable(),
  lockedUntil: z.string().nullable(),
  channelAttempts: z.array(OtpChannelAttempt).optional(),
});
export type OtpState = z.infer<typeof OtpState>;

/**
 * Argument of the `verify` update: the code sealed with the OTP key ring (`sealString`), never in clear,
 * because update arguments are recorded in the workflow history.
 */
export const OtpVerifyUpdate = z.strictObject({
  sealedCode: z.string().regex(SEALED_CODE_PATTERN, 'must be a sealed code (v1.<keyId>.<data>)'),
});
export type OtpVerifyUpdate = z.infer<typeof OtpVerifyUpdate>;

/** Answer of the `send` update and of the facade's `sendOtp`. */
export const OtpSendAnswer = z.object({
  workflowId: z.string(),
  /**
   * `sent`: a code is on its way (a new session's first, a resend, or one already in flight).
   * `cooldown`: too soon after the last send (see resendAvailableAt). `limit_reached`: no sends left.
   * `locked`: too many wrong codes; nothing is sent until lockedUntil.
   */
  status: z.enum(['sent', 'cooldown', 'limit_reached', 'locked']),
  sends: z.number().int().nonnegative(),
  sendsRemaining: z.number().int().nonnegative(),
  expiresAt: z.string().nullable(),
  resendAvailableAt: z.string().nullable(),
  lockedUntil: z.string().nullable(),
});
export type OtpSendAnswer = z.infer<typeof OtpSendAnswer>;

/** What the facade's `verifyOtp` takes: the code in clear (it is sealed before it leaves the process). */
export const VerifyOtpInput = z.strictObject({
  purpose: OtpPurpose,
  recipient: RecipientNumber,
  code: OtpVerifyRequest.shape.code,
});
export type VerifyOtpInput = z.infer<typeof VerifyOtpInput>;

/**
 * One verification's answer. `used`: this session's code was already verified (a replay, or the loser of
 * two concurrent verifications) — never a success. `expired` also answers when no session exists.
 */
export const OtpVerifyAnswer = z.object({
  status: OtpVerifyStatus,
  attemptsRemaining: z.number().int().nonnegative(),
});
export type OtpVerifyAnswer = z.infer<typeof OtpVerifyAnswer>;

// ---------------------------------------------------------------------------------------------------
// Voice: the `voiceCall` workflow
// ---------------------------------------------------------------------------------------------------

const Millis = z
  .number()
  .int()
  .positive()
  .max(24 * 60 * 60 * 1000);

export const VoiceCallInput = VoiceSendRequest.extend({
  deadlineMs: Millis.optional(),
  pollInitialMs: Millis.optional(),
  pollMaxMs: Millis.optional(),
});
export type VoiceCallInput = z.input<typeof VoiceCallInput>;

/**
 * Input of `followVoiceCall`: a call placed elsewhere (an OTP session's fallback), followed to its final state
 * by polling within `deadlineMs` (default 5 minutes).
 */
export const FollowVoiceCallInput = z.strictObject({
  callId: Id,
  deadlineMs: Millis.optional(),
});
export type FollowVoiceCallInput = z.input<typeof FollowVoiceCallInput>;

/** What `followVoiceCall` saw: the call's final state, or its last state when the deadline came first. */
export const FollowVoiceCallResult = z.object({
  callId: Id,
  /** Null when the provider could not say at the deadline either. */
  status: VoiceStatus.nullable(),
  final: z.boolean(),
});
export type FollowVoiceCallResult = z.infer<typeof FollowVoiceCallResult>;

export const VoiceCallResult = z.object({
  callId: Id,
  status: VoiceStatus,
  /** False when the deadline passed first: `status` is then the last state seen. */
  final: z.boolean(),
  durationSeconds: z.number().int().nonnegative(),
  cost: MinorUnits,
  currency: Currency,
});
export type VoiceCallResult = z.infer<typeof VoiceCallResult>;

// ---------------------------------------------------------------------------------------------------
// Contact checks: the `checkContacts` workflow
// ---------------------------------------------------------------------------------------------------

export const CheckContactsInput = z
  .strictObject({
    numbers: z.array(LookupRequest.shape.number).max(CONTACT_CHECK_MAX).default([]),
    emails: z.array(EmailVerifyRequest.shape.email).max(CONTACT_CHECK_MAX).default([]),
    /** Checks in flight at once; the provider queue's rate limit applies on top. Default 10. */
    concurrency: z.number().int().min(1).max(50).optional(),
    /** Checks per run before continuing as new (keeps each history short). Default 500. */
    checksPerRun: z.number().int().min(1).max(CONTACT_CHECK_MAX).optional(),
  })
  .superRefine(refineWith(CHECK_CONTACTS_RULES));
export type CheckContactsInput = z.output<typeof CheckContactsInput>;

/** Why a contact is not worth sending to (or, for `disposable`, why it is risky though valid). */
export const ContactReason = z.enum([
  'invalid_number',
  'unreachable',
  'invalid_syntax',
  'no_mx_record',
  'mailbox_not_found',
  'disposable',
]);

export const ContactCheck = z.object({
  kind: z.enum(['number', 'email']),
  /** As given. */
  value: z.string(),
  valid: z.boolean(),
  /** Numbers: E.164 digits without the plus (ready for a send); emails: as given. Null when invalid. */
  normalized: z.string().nullable(),
  reason: ContactReason.nullable(),
});
export type ContactCheck = z.infer<typeof ContactCheck>;

export const CheckContactsResult = z.object({
  valid: z.array(ContactCheck),
  invalid: z.array(ContactCheck),
  cost: MinorUnits,
  currency: Currency.nullable(),
});
export type CheckContactsResult = z.infer<typeof CheckContactsResult>;
