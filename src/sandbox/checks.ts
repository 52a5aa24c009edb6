/**
 * Deterministic answers for number lookups and email verification, so tests can rely on them.
 *
 * Lookups: validity, E.164 form, country and line type come from libphonenumber-js (full metadata).
 * `reachable` is true for valid numbers, except the SMS magic number for "undelivered" (a phone that is
 * off). Email: syntax, then documented magic domains and mailboxes (see EMAIL_MAGIC).
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { z } from 'zod';
import type { LineType } from '../api/checks.js';
import { MAGIC_NUMBERS } from './carrier.js';

export interface LookupAnswer {
  valid: boolean;
  e164: string | null;
  country: string | null;
  line_type: z.infer<typeof LineType> | null;
  reachable: boolean;
}

export function lookupNumber(number: string): LookupAnswer {
  // Digits only (the API's usual form) are read as international; anything else as written, e.g. "+1 202-555-0100".
  const written = /^\d+$/.test(number) ? `+${number}` : number;
  const parsed = parsePhoneNumberFromString(written);
  if (!parsed || !parsed.isValid())
    return { valid: false, e164: null, country: null, line_type: null, reachable: false };
  const e164 = parsed.number;
  return {
    valid: true,
    e164,
    country: parsed.country ?? null,
    line_type: lineTypeOf(parsed.getType()),
    reachable: e164 !== `+${MAGIC_NUMBERS.undelivered}`,
  };
}

function lineTypeOf(type: string | undefined): z.infer<typeof LineType> {
  switch (type) {
    case 'MOBILE':
    case 'FIXED_LINE_OR_MOBILE':
      return 'mobile';
    case 'FIXED_LINE':
      return 'fixed_line';
    case 'VOIP':
      return 'voip';
    case 'TOLL_FREE':
      return 'toll_free';
    case 'PREMIUM_RATE':
      return 'premium_rate';
    default:
      return 'unknown';
  }
}

/** The magic parts of email addresses that decide a verification's answer. */
export const EMAIL_MAGIC = {
  /** Domains under these top-level names have no MX record: .invalid (RFC 2606) and .test. */
  noMxTlds: ['invalid', 'test'],
  /** A few well-known disposable-address providers. */
  disposableDomains: ['mailinator.com', 'guerrillamail.com', '10minutemail.com', 'yopmail.com', 'tempmail.dev'],
  /** Local parts whose mailbox does not exist, at any domain. */
  missingMailboxes: ['bounce', 'nobody', 'doesnotexist'],
} as const;

export type EmailAnswer = {
  valid: boolean;
  result: 'deliverable' | 'undeliverable' | 'risky';
  reason: 'invalid_syntax' | 'no_mx_record' | 'mailbox_not_found' | 'disposable' | null;
  disposable: boolean;
};

// Pragmatic syntax rule: one @, a non-empty local part without spaces, a dotted domain of letters, digits and hyphens.
const EMAIL_SYNTAX = /^[^\s@]{1,64}@(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

export function verifyEmail(email: string): EmailAnswer {
  if (!EMAIL_SYNTAX.test(email))
    return { valid: false, result: 'undeliverable', reason: 'invalid_syntax', disposable: false };
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at).toLowerCase();
  const domain = email.slice(at + 1).toLowerCase();
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  if ((EMAIL_MAGIC.noMxTlds as readonly string[]).includes(tld)) {
    return { valid: false, result: 'undeliverable', reason: 'no_mx_record', disposable: false };
  }
  const disposable = (EMAIL_MAGIC.disposableDomains as readonly string[]).includes(domain);
  if ((EMAIL_MAGIC.missingMailboxes as readonly string[]).includes(local)) {
    return { valid: false, result: 'undeliverable', reason: 'mailbox_not_found', disposable };
  }
  if (disposable) return { valid: true, result: 'risky', reason: 'disposable', disposable: true };
  return { valid: true, result: 'deliverable', reason: null, disposable: false };
}
