/**
 * The OTP fraud guard's judgement of one send, as a pure function of the rules and of the recent sends that
 * reached the provider. The live guard (the message store, under one lock) and the backtest (replaying the
 * recorded history, otp-guard-replay.ts) count the same windows and call the same `judgeSend`, so the same
 * history gets the same decisions.
 */
import { countryOfNumber } from '../api/common.js';
import { type OtpBlockReason, type OtpGuardRules, UNKNOWN_COUNTRY } from '../api/otp-guard.js';

/** One OTP send about to be made. */
export interface OtpSendAttempt {
  /** The send's idempotency key: a retried activity gets the decision it got the first time. */
  key: string;
  /** The session (workflow id and run) the send belongs to; its verification counts for its sends. */
  session: string;
  purpose: string;
  /** International number, digits only. */
  number: string;
  /** When the guard judges it (ms since the epoch). */
  at: number;
  /** How the code goes out: a text, or a call reading it (absent: recorded without one). */
  channel?: 'sms' | 'voice';
}

/** Where a number belongs, as the rules see it. */
export interface SendPlace {
  country: string;
  /** The number without its last `prefixDigits(rules)` digits. */
  prefix: string;
}

/** Sends that reached the provider within one rule's window: how many, and when the oldest was made. */
export interface WindowCount {
  count: number;
  oldestAt: number | null;
}

/** The recent sends one judgement needs; null where the rule is off. */
export interface RecentSends {
  prefix: WindowCount | null;
  country: WindowCount | null;
  /** The prefix's sends over the conversion window, and how many of them belong to a verified session. */
  conversion: (WindowCount & { verified: number }) | null;
}

/** The windows to count for one send: a send counts when it was made after `since` (exclusive). */
export interface GuardWindows {
  prefixSince: number | null;
  countrySince: number | null;
  conversionSince: number | null;
}

/** `sent`: it may go; `blocked`: it may not; `monitored`: it would have been blocked, but the rules only watch. */
export type OtpGuardVerdict = 'sent' | 'blocked' | 'monitored';

export interface OtpGuardDecision {
  verdict: OtpGuardVerdict;
  /** Why it was (or would have been) blocked. */
  reason: OtpBlockReason | null;
  /** When trying again may succeed, for the rules that lift with time. */
  retryAfterSeconds: number | null;
  /** The decision an earlier try of the same send got (an activity's retry), given again. */
  replayed?: true;
}

/** Digits cut off to make a prefix when the prefix velocity rule, which names them, is off. */
export const DEFAULT_PREFIX_DIGITS = 4;

export function prefixDigits(rules: OtpGuardRules): number {
  return rules.prefixVelocity?.digits ?? DEFAULT_PREFIX_DIGITS;
}

/** Where a number belongs: its country (ZZ when not known) and its prefix under `rules`. */
export function placeOf(digits: string, rules: OtpGuardRules): SendPlace {
  return { country: countryOfNumber(digits) ?? UNKNOWN_COUNTRY, prefix: digits.slice(0, -prefixDigits(rules)) };
}

export function windowsOf(rules: OtpGuardRules, at: number): GuardWindows {
  return {
    prefixSince: rules.prefixVelocity ? at - rules.prefixVelocity.window : null,
    countrySince: rules.countryVelocity ? at - rules.countryVelocity.window : null,
    conversionSince: rules.conversion ? at - rules.conversion.coolOff : null,
  };
}

/** The guard's decision on one send; `recent` counts the windows `windowsOf(rules, attempt.at)` names. */
export function judgeSend(
  rules: OtpGuardRules,
  attempt: Pick<OtpSendAttempt, 'number' | 'at'>,
  place: SendPlace,
  recent: RecentSends,
): OtpGuardDecision {
  if (rules.allow.includes(attempt.number)) return { verdict: 'sent', reason: null, retryAfterSeconds: null };
  const refusal = firstRefusal(rules, attempt, place, recent);
  if (!refusal) return { verdict: 'sent', reason: null, retryAfterSeconds: null };
  return { verdict: rules.monitor ? 'monitored' : 'blocked', ...refusal };
}

function firstRefusal(
  rules: OtpGuardRules,
  { number, at }: Pick<OtpSendAttempt, 'number' | 'at'>,
  place: SendPlace,
  recent: RecentSends,
): Pick<OtpGuardDecision, 'reason' | 'retryAfterSeconds'> | null {
  const { countries, prefixVelocity, countryVelocity, conversion } = rules;
  if (rules.deny.includes(number)) return { reason: 'deny_list', retryAfterSeconds: null };
  if (countries && countries.list.includes(place.country) !== (countries.mode === 'allow'))
    return { reason: 'country_not_allowed', retryAfterSeconds: null };
  if (prefixVelocity && recent.prefix && recent.prefix.count >= prefixVelocity.max)
    return { reason: 'prefix_velocity', retryAfterSeconds: secondsUntil(recent.prefix, prefixVelocity.window, at) };
  if (countryVelocity && recent.country && recent.country.count >= countryVelocity.max)
    return { reason: 'country_velocity', retryAfterSeconds: secondsUntil(recent.country, countryVelocity.window, at) };
  if (
    conversion &&
    recent.conversion &&
    recent.conversion.count >= conversion.minSends &&
    recent.conversion.verified < conversion.minRate * recent.conversion.count
  )
    return { reason: 'low_conversion', retryAfterSeconds: secondsUntil(recent.conversion, conversion.coolOff, at) };
  return null;
}

/** Seconds until the oldest send of a full window leaves it (at least 1). */
function secondsUntil({ oldestAt }: WindowCount, window: number, at: number): number {
  return Math.max(1, Math.ceil(((oldestAt ?? at) + window - at) / 1000));
}
