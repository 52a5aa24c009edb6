/** One-time passwords: send and verify (request fields are msgflow's choice; the spec does not show them). */
import { z } from 'zod';
import { Currency, Id, MinorUnits, OffsetDateTime, PlusNumber, RecipientNumber, SenderId } from './common.js';
import { VoiceLanguage } from './voice.js';
import { OTP_DEFAULT_LENGTH, OTP_DEFAULT_TTL_SECONDS, PROVIDER_OTP_TTL } from './constants.js';

/** How a code reaches the person: a text, or a call that reads it out. */
export const OtpChannel = z.enum(['sms', 'voice']);
export type OtpChannel = z.infer<typeof OtpChannel>;

export const OtpSendRequest = z
  .strictObject({
    recipient: RecipientNumber,
    channel: OtpChannel.default('sms'),
    otp_id: Id.optional().meta({
      description:
        'Deliver the pending code of this OTP again, over `channel`, instead of making a new one: same code, same expiry, same attempts',
    }),
    sender: SenderId.optional(),
    length: z.number().int().min(4).max(10).default(OTP_DEFAULT_LENGTH),
    expires_in: z
      .number()
      .int()
      .min(PROVIDER_OTP_TTL.min)
      .max(PROVIDER_OTP_TTL.max)
      .default(OTP_DEFAULT_TTL_SECONDS)
      .meta({ description: 'Seconds' }),
    template: z
      .string()
      .min(6)
      .max(300)
      .regex(/\{code\}/, 'must contain the {code} placeholder')
      .optional()
      .meta({ description: "Message text, or the call's script; {code} is replaced by the code" }),
    language: VoiceLanguage.optional().meta({ description: 'Language of a voice call (default en-US)' }),
  })
  .meta({ id: 'OtpSendRequest' });
export type OtpSendRequest = z.input<typeof OtpSendRequest>;

/** `provider_message_id` for a code sent by SMS, `call_id` (see GET /voice/{id}) for one read out in a call. */
export const OtpSendResult = z
  .looseObject({
    otp_id: Id,
    channel: OtpChannel.default('sms'),
    provider_message_id: Id.optional(),
    call_id: Id.optional(),
    mobile_number: PlusNumber,
    status: z.literal('pending'),
    expires_at: OffsetDateTime,
    cost: MinorUnits,
    currency: Currency,
  })
  .refine((r) => (r.channel === 'sms' ? r.provider_message_id : r.call_id) !== undefined, {
    message: 'an SMS send has a provider_message_id, a voice send a call_id',
  })
  .meta({ id: 'OtpSendResult' });
export type OtpSendResult = z.infer<typeof OtpSendResult>;

export const OtpVerifyRequest = z
  .strictObject({
    otp_id: Id,
    code: z.string().regex(/^\d{4,10}$/, 'must be 4 to 10 digits'),
  })
  .meta({ id: 'OtpVerifyRequest' });
export type OtpVerifyRequest = z.infer<typeof OtpVerifyRequest>;

/**
 * Outcome of one verify attempt. A wrong code is an answer, not an error: `invalid` with the attempts
 * left; `locked` once they run out; `expired` after expires_at; `used` for a code already verified.
 */
export const OtpVerifyStatus = z.enum(['verified', 'invalid', 'expired', 'locked', 'used']);
export type OtpVerifyStatus = z.infer<typeof OtpVerifyStatus>;

export const OtpVerifyResult = z
  .looseObject({
    otp_id: Id,
    status: OtpVerifyStatus,
    attempts_remaining: z.number().int().nonnegative(),
  })
  .meta({ id: 'OtpVerifyResult' });
export type OtpVerifyResult = z.infer<typeof OtpVerifyResult>;
