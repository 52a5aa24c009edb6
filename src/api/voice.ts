/** Voice messages: text-to-speech calls, followed by polling GET /voice/{id} (no voice events exist). */
import { z } from 'zod';
import { Currency, Id, MinorUnits, OffsetDateTime, PlusNumber, RecipientNumber, SenderId } from './common.js';
import { VOICE_FINAL_STATUSES, VOICE_PENDING_STATUSES } from './constants.js';

/** The text-to-speech language of a call. */
export const VoiceLanguage = z.string().regex(/^[a-z]{2}(-[A-Z]{2})?$/, 'must be a language tag like en-US');

export const VoiceSendRequest = z
  .strictObject({
    recipient: RecipientNumber,
    message: z.string().min(1).max(1000).meta({ description: 'Text read out by text-to-speech' }),
    sender: SenderId.optional().meta({ description: 'Caller ID' }),
    language: VoiceLanguage.default('en-US'),
    repeat: z.number().int().min(1).max(3).default(1),
  })
  .meta({ id: 'VoiceSendRequest' });
export type VoiceSendRequest = z.input<typeof VoiceSendRequest>;

export const VoiceStatus = z.enum([...VOICE_PENDING_STATUSES, ...VOICE_FINAL_STATUSES]);
export type VoiceStatus = z.infer<typeof VoiceStatus>;

export const VoiceCall = z
  .looseObject({
    id: Id,
    mobile_number: PlusNumber,
    status: VoiceStatus,
    duration_seconds: z.number().int().nonnegative(),
    cost: MinorUnits,
    currency: Currency,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
  })
  .meta({ id: 'VoiceCall' });
export type VoiceCall = z.infer<typeof VoiceCall>;
