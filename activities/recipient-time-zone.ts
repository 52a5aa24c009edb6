/**
 * Each recipient's time zone, for a send window in their own local hours: the audience field naming it,
 * else the zone of their number's country when the country has only one (libphonenumber-js gives the
 * country, countries-and-timezones its zones), else the campaign's default. Activities only: the workflow
 * bundle never carries these tables.
 */
import { getCountry } from 'countries-and-timezones';
import type { SendWindow } from '../src/api/campaign-io.js';
import { countryOfNumber } from '../src/api/common.js';
import type { AudienceFields } from '../src/api/message-template.js';
import { isTimeZone, NOT_A_TIME_ZONE } from '../src/api/time-zone.js';

/** Field names read as a recipient's zone when the window names none (matched without regard to case). */
export const TIME_ZONE_FIELDS = ['timezone', 'time_zone', 'tz'];

export type ZoneOf = { ok: true; timeZone: string } | { ok: false; reason: string };

function fieldValue(fields: AudienceFields | undefined, names: readonly string[]): string | undefined {
  if (!fields) return undefined;
  const wanted = names.map((n) => n.toLowerCase());
  for (const [key, value] of Object.entries(fields)) {
    if (wanted.includes(key.trim().toLowerCase()) && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/** The zones a number's country spans (empty when the country is not known). */
export function zonesOfNumber(digits: string): { country?: string; zones: string[] } {
  const country = countryOfNumber(digits);
  return { country, zones: country ? (getCountry(country)?.timezones ?? []) : [] };
}

/** A recipient's zone under `window` (whose timeZone is 'recipient'), or why it cannot be told. */
export function recipientTimeZone(
  digits: string,
  fields: AudienceFields | undefined,
  window: Pick<SendWindow, 'timeZoneField' | 'defaultTimeZone'>,
): ZoneOf {
  const given = fieldValue(fields, window.timeZoneField ? [window.timeZoneField] : TIME_ZONE_FIELDS);
  if (given !== undefined) {
    return isTimeZone(given)
      ? { ok: true, timeZone: given }
      : { ok: false, reason: `"${given.slice(0, 40)}" ${NOT_A_TIME_ZONE}` };
  }
  const { country, zones } = zonesOfNumber(digits);
  if (zones.length === 1) return { ok: true, timeZone: zones[0]! };
  if (window.defaultTimeZone) return { ok: true, timeZone: window.defaultTimeZone };
  const field = window.timeZoneField ?? TIME_ZONE_FIELDS.join('/');
  return {
    ok: false,
    reason: country
      ? `no time zone: the number's country (${country}) has ${zones.length} zones; give a ${field} field or a defaultTimeZone`
      : `no time zone: the number's country is not known; give a ${field} field or a defaultTimeZone`,
  };
}
