/** Contact checks: number lookup and email address verification. */
import { z } from 'zod';
import { Currency, Id, MinorUnits, OffsetDateTime } from './common.js';

export const LookupRequest = z
  .strictObject({
    number: z.string().min(3).max(32).meta({ description: 'Any written form; the answer says whether it is valid' }),
  })
  .meta({ id: 'LookupRequest' });
export type LookupRequest = z.infer<typeof LookupRequest>;

export const LineType = z.enum(['mobile', 'fixed_line', 'voip', 'toll_free', 'premium_rate', 'unknown']);

export const Lookup = z
  .looseObject({
    id: Id,
    number: z.string(),
    valid: z.boolean(),
    e164: z.string().nullable(),
    country: z.string().nullable().meta({ description: 'ISO 3166-1 alpha-2' }),
    line_type: LineType.nullable(),
    reachable: z.boolean(),
    cost: MinorUnits,
    currency: Currency,
    created_at: OffsetDateTime,
  })
  .meta({ id: 'Lookup' });
export type Lookup = z.infer<typeof Lookup>;

export const EmailVerifyRequest = z
  .strictObject({ email: z.string().min(3).max(254) })
  .meta({ id: 'EmailVerifyRequest' });
export type EmailVerifyRequest = z.infer<typeof EmailVerifyRequest>;

export const EmailVerification = z
  .looseObject({
    email: z.string(),
    valid: z.boolean(),
    result: z.enum(['deliverable', 'undeliverable', 'risky']),
    reason: z.enum(['invalid_syntax', 'no_mx_record', 'mailbox_not_found', 'disposable']).nullable(),
    disposable: z.boolean(),
    cost: MinorUnits,
    currency: Currency,
  })
  .meta({ id: 'EmailVerification' });
export type EmailVerification = z.infer<typeof EmailVerification>;
