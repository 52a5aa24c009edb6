/**
 * Building blocks shared by every part of the v1 contract.
 *
 * Each shape here is the single source of truth: the sandbox validates with it, the client types and
 * parses with it, the ingress parses events with it, and the OpenAPI document is generated from it.
 */
import { isValidPhoneNumber, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';
import { RECIPIENT_DIGITS, SENDER_ID_PATTERN } from './constants.js';

/** The country (ISO 3166-1 alpha-2) of an international number in digits, when libphonenumber knows it. */
export function countryOfNumber(digits: string): string | undefined {
  return parsePhoneNumberFromString(`+${digits}`)?.country;
}

/** Past this many numbers the memo of validity starts over. */
const VALIDITY_MEMO_SIZE = 50_000;
const validity = new Map<string, boolean>();

/**
 * libphonenumber's check costs tens of microseconds a number, and a campaign's numbers are checked twice in
 * the same process (read from the audience, then in the client's request): the second time is a lookup.
 */
function isValidInternational(digits: string): boolean {
  let valid = validity.get(digits);
  if (valid === undefined) {
    if (validity.size >= VALIDITY_MEMO_SIZE) validity.clear();
    valid = isValidPhoneNumber(`+${digits}`);
    validity.set(digits, valid);
  }
  return valid;
}

/** Recipient number as the spec's send requests take it: international format, digits only. */
export const RecipientNumber = z
  .string()
  .regex(RECIPIENT_DIGITS, 'not a phone number (international digits, e.g. 2348012345678)')
  .refine(isValidInternational, 'is not a valid phone number')
  .meta({ description: 'International format, digits only (no leading +)', example: '2348012345678' });

/** A number as status events carry it: international format with a leading plus sign. */
export const PlusNumber = z
  .string()
  .regex(/^\+[1-9]\d{6,14}$/, 'must be an international number with a leading +')
  .meta({ example: '+2348012345678' });

/** ISO 8601 date-time with a numeric UTC offset (the spec's event timestamps), e.g. 2026-01-31T09:00:00+00:00. */
export const OffsetDateTime = z
  .string()
  .regex(/[+-]\d{2}:\d{2}$/, 'must end with a numeric UTC offset such as +00:00')
  .pipe(z.iso.datetime({ offset: true }))
  .meta({ example: '2026-01-31T09:00:00+00:00' });

/** Formats a Date the way every timestamp of the API is written: ISO 8601 with a numeric offset (+00:00). */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/Z$/, '+00:00');
}

/** Money is always an integer amount of minor units (e.g. kobo, cents); the currency travels beside it. */
export const MinorUnits = z.number().int().meta({ description: 'Integer amount in minor units (e.g. cents)' });
export const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: 'ISO 4217 code', example: 'USD' });

/** Approved sender identifiers: alphanumeric (up to 11 characters) or a numeric short/long code. */
export const SenderId = z
  .string()
  .regex(SENDER_ID_PATTERN, 'must be 1-11 letters/digits, or a number of 3-15 digits')
  .meta({ example: 'ACME' });

export const Id = z.string().min(1).max(200);

/** The success envelope: every successful response carries its payload under `data`. */
export function envelope<T extends z.ZodType>(payload: T) {
  return z.object({ data: payload });
}

export const PER_PAGE_DEFAULT = 50;
export const PER_PAGE_MAX = 200;

/** Paginated list (spec "Paginated list"): data, next_cursor (null on the last page) and per_page. */
export function paginated<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().meta({ description: 'Opaque; pass back unchanged as `cursor`' }),
    per_page: z.number().int().positive(),
  });
}

/** Query parameters shared by list endpoints. Numbers arrive as strings in a query string. */
export const ListQuery = z.strictObject({
  cursor: z.string().min(1).max(512).optional(),
  per_page: z.coerce.number().int().min(1).max(PER_PAGE_MAX).default(PER_PAGE_DEFAULT),
});
