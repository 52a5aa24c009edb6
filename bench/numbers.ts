/**
 * Phone numbers for the benchmarks: people logging in have numbers spread over many prefixes (the OTP fraud
 * guard's prefix is the number without its last four digits); a pumping script walks through a few prefixes.
 */
import { isValidPhoneNumber } from 'libphonenumber-js/max';

/** Mobile ranges of a few countries: `P` digits make the prefix, `S` digits the last four. */
export const MOBILE_TEMPLATES = {
  NG: '234803PPPSSSS',
  GH: '23324PPPSSSS',
  KE: '25471PPPSSSS',
  BR: '55119PPPPSSSS',
  IN: '9198PPPPSSSS',
} as const;
export type BenchCountry = keyof typeof MOBILE_TEMPLATES;

function fill(template: string, prefix: number, suffix: number): string {
  const slots = template.split('P').length - 1;
  if (prefix >= 10 ** slots) throw new RangeError(`${template} has ${slots} prefix digits: ${prefix} does not fit`);
  const p = String(prefix).padStart(slots, '0');
  const s = String(suffix).padStart(4, '0');
  let i = 0;
  let j = 0;
  return template.replace(/[PS]/g, (slot) => (slot === 'P' ? p[i++]! : s[j++]!));
}

/** The first `count` valid numbers among `candidate(0)`, `candidate(1)`, … (at most `tries` of them). */
function firstValid(count: number, candidate: (i: number) => string, tries = Number.POSITIVE_INFINITY): string[] {
  const numbers: string[] = [];
  for (let i = 0; numbers.length < count && i < tries; i++) {
    const number = candidate(i);
    if (isValidPhoneNumber(`+${number}`)) numbers.push(number);
  }
  return numbers;
}

/** `count` valid numbers of `country`, each in a prefix of its own, starting at prefix `from`. */
export function spreadNumbers(count: number, country: BenchCountry = 'NG', from = 0): string[] {
  return firstValid(count, (i) => fill(MOBILE_TEMPLATES[country], from + i, 4321));
}

/** `count` valid numbers in one prefix of `country`, one after the other (as a pumping script walks them). */
export function sequentialNumbers(count: number, country: BenchCountry, prefix: number): string[] {
  const numbers = firstValid(count, (suffix) => fill(MOBILE_TEMPLATES[country], prefix, suffix), 10_000);
  if (numbers.length < count) throw new Error(`prefix ${prefix} of ${country} has fewer than ${count} valid numbers`);
  return numbers;
}

/** `count` distinct valid 13-digit numbers starting with `start` (a campaign's audience). */
export function numbersStartingWith(count: number, start: string): string[] {
  return firstValid(count, (n) => `${start}${String(n).padStart(13 - start.length, '0')}`);
}
