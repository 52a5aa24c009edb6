/**
 * The OTP fraud guard's rules: what a rules file (MSGFLOW_OTP_GUARD_RULES, YAML or JSON) may say, and the
 * defaults that apply without one. Each rule can be switched off with `null`; a purpose (login, signup…) may
 * override any rule under `purposes`. Times are durations (`10m`, `1h`); numbers are international, with or
 * without a leading plus sign.
 */
import { z } from 'zod';
import { RecipientNumber } from './common.js';
import { durationText, formatDuration } from './duration.js';
import { OtpPurpose } from './otp-io.js';

/** Why the guard kept a send from the provider. */
export const OTP_BLOCK_REASONS = [
  'deny_list',
  'country_not_allowed',
  'prefix_velocity',
  'country_velocity',
  'low_conversion',
] as const;
export const OtpBlockReason = z.enum(OTP_BLOCK_REASONS);
export type OtpBlockReason = z.infer<typeof OtpBlockReason>;

/** The country code of numbers whose country is not known (ISO 3166-1 keeps ZZ for such use). */
export const UNKNOWN_COUNTRY = 'ZZ';

const CountryCode = z
  .string()
  .regex(/^[A-Z]{2}$/, `must be an ISO 3166-1 alpha-2 code in capitals, e.g. NG (${UNKNOWN_COUNTRY}: not known)`);
const Count = z.number().int().min(1).max(1_000_000);
const Window = durationText({ min: 1000, max: 30 * 86_400_000 });
const ListedNumber = z
  .string()
  .transform((number) => number.trim().replace(/^\+/, ''))
  .pipe(RecipientNumber);

const Countries = z.strictObject({ mode: z.enum(['allow', 'block']), list: z.array(CountryCode) });
const PrefixVelocity = z.strictObject({
  /** The prefix is the number without its last `digits` digits. */
  digits: z.number().int().min(1).max(10),
  max: Count,
  window: Window,
});
const CountryVelocity = z.strictObject({ max: Count, window: Window });
const Conversion = z.strictObject({
  /** Verified sends ÷ sends of a prefix over the last `coolOff`, below which its sends are blocked. */
  minRate: z.number().min(0).max(1),
  /** Sends a prefix must have had over the last `coolOff` before its rate is judged. */
  minSends: Count,
  coolOff: Window,
});

/** One level of rules as written: every field optional; `null` switches a rule off. */
const RulesText = z.strictObject({
  /** true: record and count what would be blocked, block nothing. */
  monitor: z.boolean().optional(),
  countries: Countries.nullable().optional(),
  prefixVelocity: PrefixVelocity.nullable().optional(),
  countryVelocity: CountryVelocity.nullable().optional(),
  conversion: Conversion.nullable().optional(),
  /** Never blocked (test numbers). */
  allow: z.array(ListedNumber).optional(),
  /** Always blocked. */
  deny: z.array(ListedNumber).optional(),
});

/** A rules file: the rules every purpose follows, and what a purpose changes. */
export const OtpGuardRulesFile = RulesText.extend({
  purposes: z.record(OtpPurpose, RulesText).optional(),
});
export type OtpGuardRulesFile = z.input<typeof OtpGuardRulesFile>;

/** The rules one send is judged by, every field resolved (windows in ms). */
export interface OtpGuardRules {
  monitor: boolean;
  countries: z.infer<typeof Countries> | null;
  prefixVelocity: z.infer<typeof PrefixVelocity> | null;
  countryVelocity: z.infer<typeof CountryVelocity> | null;
  conversion: z.infer<typeof Conversion> | null;
  /** Digits only. */
  allow: string[];
  deny: string[];
}

/** A deployment's guard: the rules of every purpose, and the rules of the purposes that differ. */
export interface OtpGuardConfig {
  rules: OtpGuardRules;
  purposes: Record<string, OtpGuardRules>;
}

/**
 * Without a rules file: a prefix (the number but its last 4 digits) gets at most 10 sends in 10 minutes, and
 * once it has had 5 sends in the last hour with fewer than 1 in 5 verified, it gets none until that hour has
 * passed. Countries are not limited.
 */
export const DEFAULT_OTP_GUARD_RULES: OtpGuardRules = {
  monitor: false,
  countries: null,
  prefixVelocity: { digits: 4, max: 10, window: 10 * 60_000 },
  countryVelocity: null,
  conversion: { minRate: 0.2, minSends: 5, coolOff: 60 * 60_000 },
  allow: [],
  deny: [],
};

/** Every rule off: each send is recorded, none is blocked. */
export const NO_OTP_GUARD_RULES: OtpGuardRules = {
  monitor: false,
  countries: null,
  prefixVelocity: null,
  countryVelocity: null,
  conversion: null,
  allow: [],
  deny: [],
};

export class OtpGuardRulesError extends Error {
  override name = 'OtpGuardRulesError';
}

/** The guard a parsed rules file describes (the defaults where it says nothing); throws naming the bad rule. */
export function otpGuardConfig(file: unknown): OtpGuardConfig {
  const parsed = OtpGuardRulesFile.safeParse(file ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(file)'}: ${issue.message}`);
    throw new OtpGuardRulesError(`the OTP guard rules are not valid: ${problems.join('; ')}`);
  }
  const { purposes = {}, ...base } = parsed.data;
  const rules = { ...DEFAULT_OTP_GUARD_RULES, ...base };
  return {
    rules,
    purposes: Object.fromEntries(Object.entries(purposes).map(([purpose, own]) => [purpose, { ...rules, ...own }])),
  };
}

export const DEFAULT_OTP_GUARD: OtpGuardConfig = { rules: DEFAULT_OTP_GUARD_RULES, purposes: {} };
/** A guard that records every send and blocks none (the rules file `{ prefixVelocity: null, conversion: null }`). */
export const NO_OTP_GUARD: OtpGuardConfig = { rules: NO_OTP_GUARD_RULES, purposes: {} };

export function rulesOfPurpose(config: OtpGuardConfig, purpose: string): OtpGuardRules {
  return config.purposes[purpose] ?? config.rules;
}

/** One line per rule, for `msgflow otp guard` output and logs. */
export function describeRules(rules: OtpGuardRules): string[] {
  const { countries, prefixVelocity, countryVelocity, conversion } = rules;
  return [
    `mode: ${rules.monitor ? 'monitor (nothing blocked)' : 'enforce'}`,
    `countries: ${countries ? `${countries.mode} ${countries.list.join(', ') || '(none)'}` : 'any'}`,
    `prefix velocity: ${prefixVelocity ? `${prefixVelocity.max} per ${formatDuration(prefixVelocity.window)}, prefix = all but the last ${prefixVelocity.digits} digits` : 'off'}`,
    `country velocity: ${countryVelocity ? `${countryVelocity.max} per ${formatDuration(countryVelocity.window)}` : 'off'}`,
    `conversion: ${conversion ? `at least ${conversion.minRate} verified after ${conversion.minSends} sends, over ${formatDuration(conversion.coolOff)}` : 'off'}`,
    `allow list: ${rules.allow.length} numbers, deny list: ${rules.deny.length} numbers`,
  ];
}
