/**
 * Whether a name is an IANA time zone (`Africa/Lagos`, `UTC`) this runtime knows: the one check the campaign
 * schema (src/api/campaign-io.ts) and the recipients' zones (activities/recipient-time-zone.ts) apply. Plain
 * code without zod, so any layer may import it.
 */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** What a name that fails `isTimeZone` is told. */
export const NOT_A_TIME_ZONE = 'is not a known IANA time zone, e.g. Africa/Lagos';
