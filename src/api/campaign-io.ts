/**
 * msgflow's own contract for campaigns (`smsCampaign`) and scheduled reminder campaigns: inputs, the
 * `progress` query, the result, and the rule that turns a listed number into a recipient. Backend services
 * in any language start `smsCampaign` with this JSON; the starter facade and the CLI validate with it.
 */
import {
  type CountryCode as Iso3166Country,
  isSupportedCountry,
  parsePhoneNumberFromString,
} from 'libphonenumber-js/max';
import { z } from 'zod';
import { Currency, MinorUnits, RecipientNumber, SenderId } from './common.js';
import {
  MAX_INLINE_RECIPIENTS,
  MAX_MESSAGE_LENGTH,
  MAX_RECIPIENTS_PER_REQUEST,
  MAX_OUTSTANDING,
  RECIPIENT_TIME_ZONE,
} from './constants.js';
import { CAMPAIGN_RULES, MESSAGE_TEMPLATE_RULES, refineWith, SEND_WINDOW_RULES } from './input-rules.js';
import { TeamName } from './team-weights.js';
import { isTimeZone, NOT_A_TIME_ZONE } from './time-zone.js';

export { MAX_INLINE_RECIPIENTS } from './constants.js';

const Millis = z
  .number()
  .int()
  .positive()
  .max(30 * 24 * 60 * 60 * 1000);

/** An IANA time zone name such as `Africa/Lagos` (or `UTC`). */
export const TimeZone = z.string().min(1).max(64).refine(isTimeZone, NOT_A_TIME_ZONE);

// ---------------------------------------------------------------------------------------------------------
// Recipients

/** An ISO 3166-1 alpha-2 country code that numbers can be read in, e.g. `NG`. */
export const CountryCode = z
  .string()
  .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code in capitals, e.g. NG')
  .refine((code) => isSupportedCountry(code), 'is not a country code phone numbers are known for, e.g. NG');

export type RecipientCheck = { ok: true; digits: string } | { ok: false; reason: string };

/**
 * Turns a listed number into the API's recipient form (international, digits only). Accepted: digits with
 * or without a leading `+` or `00`, with spaces, dots, dashes or parentheses between them. A local form
 * (`08012345678`) is read in `defaultCountry` (a valid CountryCode) when given, and refused otherwise: there
 * is no country to guess from. Digits valid as an international number are read as one, country or not.
 */
export function normalizeRecipient(raw: string, defaultCountry?: string): RecipientCheck {
  const trimmed = raw.trim();
  if (!/^(\+|00)?[\d\s().-]+$/.test(trimmed)) return { ok: false, reason: 'unknown number format' };
  let digits = trimmed.replace(/[\s().-]/g, '');
  const international = /^(\+|00)/.test(digits);
  if (digits.startsWith('+')) digits = digits.slice(1);
  else if (digits.startsWith('00')) digits = digits.slice(2);
  if (RecipientNumber.safeParse(digits).success) return { ok: true, digits };
  if (defaultCountry !== undefined && !international) {
    const local = parsePhoneNumberFromString(digits, defaultCountry as Iso3166Country);
    if (local?.isValid()) return { ok: true, digits: local.number.slice(1) };
    return { ok: false, reason: `not a valid phone number (international, or local in ${defaultCountry})` };
  }
  if (/^[1-9]\d{6,14}$/.test(digits)) return { ok: false, reason: 'not a valid phone number' };
  if (digits.startsWith('0') && !international)
    return {
      ok: false,
      reason:
        "unknown number format: a local number needs the campaign's default country (defaultCountry, --default-country NG), or write it international, e.g. +2348012345678",
    };
  return { ok: false, reason: 'unknown number format (expected international, e.g. +2348012345678)' };
}

/** A listed entry that was not sent to, where it was (0-based position in the audience) and why. */
export const InvalidRecipient = z.object({
  index: z.number().int().nonnegative(),
  /** The entry, masked: a number keeps its last two digits, other text only its length. */
  value: z.string(),
  reason: z.string(),
});
export type InvalidRecipient = z.infer<typeof InvalidRecipient>;

// ---------------------------------------------------------------------------------------------------------
// Audience

export const AudienceFormat = z.enum(['csv', 'ndjson', 'txt']);
export type AudienceFormat = z.infer<typeof AudienceFormat>;

const Column = z.string().min(1).max(100);

/** The field separator of a CSV; detected from the header row (`,` `;` tab `|`) when not given. */
export const CsvDelimiter = z
  .string()
  .length(1, 'must be one character, e.g. ; or a tab')
  .regex(/^[^"\r\n]$/, 'cannot be a quote or a line break');

/**
 * Where the recipients come from. `inline`: listed in the input (small campaigns). `file`/`url`: a CSV
 * (header row, fields separated by `delimiter` or the one detected: `,` `;` tab `|`; quoted fields may hold
 * separators and line breaks; the phone column is `column` or the first named phone/mobile/msisdn/number/recipient), NDJSON
 * (a JSON string per line, or an object with the `column` field) or plain text (one number per line), read
 * in pages by the worker at run time. `loader`: an audience loader registered with the worker by name
 * (e.g. a database query), given `params`.
 */
export const AudienceSource = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('inline'),
    recipients: z.array(z.string().max(64)).min(1).max(MAX_INLINE_RECIPIENTS),
  }),
  z.strictObject({
    type: z.literal('file'),
    /** Absolute path as the worker sees it. */
    path: z.string().min(1).max(4096).regex(/^\//, 'must be an absolute path (the worker reads it)'),
    format: AudienceFormat.optional(),
    column: Column.optional(),
    delimiter: CsvDelimiter.optional(),
  }),
  z.strictObject({
    type: z.literal('url'),
    url: z.url({ protocol: /^https?$/ }).regex(/^https?:\/\/[^\s/]+/, 'must be an http(s) URL'),
    format: AudienceFormat.optional(),
    column: Column.optional(),
    delimiter: CsvDelimiter.optional(),
  }),
  z.strictObject({
    type: z.literal('loader'),
    name: z.string().regex(/^[A-Za-z][\w.-]{0,63}$/, 'must be a loader name: letters, digits, _ . -'),
    params: z.record(z.string(), z.unknown()).optional(),
  }),
]);
export type AudienceSource = z.infer<typeof AudienceSource>;

// ---------------------------------------------------------------------------------------------------------
// Send window

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export const Weekday = z.enum(WEEKDAYS);
export type Weekday = z.infer<typeof Weekday>;

const ClockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/, 'must be a local time HH:MM or HH:MM:SS');

/**
 * Local hours the campaign may send in; outside them it sleeps (messages already sent are still tracked).
 * `end` before `start` spans midnight; `days` (default every day) names the days a window starts on.
 * `timeZone: 'recipient'` puts the window in each recipient's zone: their `timeZoneField` (default a field
 * named timezone, time_zone or tz), else their number's country's zone when it has one, else `defaultTimeZone`.
 */
export const SendWindow = z
  .strictObject({
    start: ClockTime,
    end: ClockTime,
    timeZone: z.union([z.literal(RECIPIENT_TIME_ZONE), TimeZone]),
    days: z.array(Weekday).min(1).max(7).optional(),
    /** With `timeZone: 'recipient'`: the audience field holding each recipient's IANA zone. */
    timeZoneField: z.string().min(1).max(100).optional(),
    /** With `timeZone: 'recipient'`: the zone of a recipient without one (no field, a country of several zones). */
    defaultTimeZone: TimeZone.optional(),
  })
  .superRefine(refineWith(SEND_WINDOW_RULES));
export type SendWindow = z.infer<typeof SendWindow>;

// ---------------------------------------------------------------------------------------------------------
// Campaign input

/** A campaign's message: a template whose `{field}` placeholders are filled from each recipient's audience fields. */
export const MessageTemplate = z
  .string()
  .min(1)
  .max(MAX_MESSAGE_LENGTH)
  .superRefine(refineWith(MESSAGE_TEMPLATE_RULES));

export const CampaignInput = z
  .strictObject({
    sender: SenderId,
    /** The text, or a template: `{name}` is filled from each recipient's field `name`; `{{` `}}` are braces. */
    message: MessageTemplate,
    audience: AudienceSource,
    /** Recipients per send request (default and maximum: the provider's 1000). */
    chunkSize: z.number().int().min(1).max(MAX_RECIPIENTS_PER_REQUEST).optional(),
    /** Chunk send requests in flight at once (default 8); the provider queue's rate limit still applies. */
    chunksInFlight: z.number().int().min(1).max(16).optional(),
    sendWindow: SendWindow.optional(),
    /** How long each message may take to reach a final state before the provider is asked (ms). Default 6 h. */
    waitWindowMs: Millis.optional(),
    /** Validate, estimate the cost and check the balance before sending anything. Default true. */
    preflight: z.boolean().optional(),
    /** The most this campaign may cost (minor units of the account's currency): pre-flight fails above it. */
    maxCost: MinorUnits.optional(),
    /** Messages awaiting their final state before sending pauses (default and most 10,000; at least `chunkSize`). */
    maxOutstanding: z.number().int().min(1).max(MAX_OUTSTANDING).optional(),
    /** Country (ISO 3166-1 alpha-2, e.g. NG) in which audience numbers written in local form are read. */
    defaultCountry: CountryCode.optional(),
    /** History events after which a run continues as new (default 2000). */
    maxEventsPerRun: z.number().int().min(200).max(10_000).optional(),
    /** Who the campaign sends for: teams on one token share its requests by weight (default team `default`). */
    team: TeamName.optional(),
  })
  .superRefine(refineWith(CAMPAIGN_RULES));
export type CampaignInput = z.infer<typeof CampaignInput>;

/**
 * A campaign key: the workflow id is `campaign:<key>`, and chunk idempotency keys derive from it (at most
 * 255 characters with the run id and chunk number, hence 150 here). Never a phone number.
 */
export const CampaignKey = z
  .string()
  .min(1)
  .max(150)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** A campaign started through the Nexus service (`startCampaign`): the campaign under its key. */
export const StartCampaignRequest = z.strictObject({
  /** Without one, the Nexus request's id is the key. */
  key: CampaignKey.optional(),
  campaign: CampaignInput,
});
export type StartCampaignRequest = z.infer<typeof StartCampaignRequest>;

// ---------------------------------------------------------------------------------------------------------
// Progress and result

export const CAMPAIGN_PHASES = [
  'preflight',
  'sending',
  'throttled',
  'outside-window',
  'paused',
  'draining',
  'completed',
  'cancelled',
] as const;
export const CampaignPhase = z.enum(CAMPAIGN_PHASES);
export type CampaignPhase = z.infer<typeof CampaignPhase>;

export const CostEstimate = z.object({
  recipients: z.number().int().nonnegative(),
  /** Segments of one text; for personal texts, of the longest one. */
  segments: z.number().int().positive(),
  /** Segments of all the texts together (each recipient's rendered text counted on its own). */
  totalSegments: z.number().int().nonnegative().optional(),
  /** Recipients whose text needs UCS-2 (a character outside GSM-7): 70 characters a segment instead of 160. */
  ucs2Recipients: z.number().int().nonnegative().optional(),
  pricePerSegment: MinorUnits,
  cost: MinorUnits,
  currency: Currency,
  balance: MinorUnits,
  /** What the spend cap still allows this month; null without a cap. */
  spendCapRemaining: MinorUnits.nullable(),
});
export type CostEstimate = z.infer<typeof CostEstimate>;

/**
 * Messages per state: the five final ones, and for those that never reached one, the last known (`sent`,
 * `queued`, `unknown`).
 */
export const StateCounts = z.record(z.string(), z.number().int().nonnegative());
export type StateCounts = z.infer<typeof StateCounts>;

/** The `progress` query. */
export const CampaignProgress = z.object({
  phase: CampaignPhase,
  paused: z.boolean(),
  /**
   * Why sending is paused: an operator's reason, or a provider refusal (e.g. InsufficientBalance) to fix
   * before resuming.
   */
  pausedReason: z.string().nullable(),
  cancelled: z.boolean(),
  /** Audience entries read so far; `valid` unique recipients among them; `total` valid ones known from pre-flight. */
  audience: z.object({
    read: z.number().int().nonnegative(),
    valid: z.number().int().nonnegative(),
    invalid: z.number().int().nonnegative(),
    duplicates: z.number().int().nonnegative(),
    total: z.number().int().nonnegative().nullable(),
  }),
  /** Messages the provider accepted. */
  sent: z.number().int().nonnegative(),
  /** Recipients not sent to: on the suppression list (opted out) when their chunk was read. */
  suppressed: z.number().int().nonnegative().default(0),
  /** Sent messages still waiting for their final state. */
  queued: z.number().int().nonnegative(),
  counts: StateCounts,
  cost: MinorUnits,
  currency: Currency.nullable(),
  chunks: z.number().int().nonnegative(),
  estimate: CostEstimate.nullable(),
  /** When the send window opens next, while the campaign waits for it. */
  windowOpensAt: z.string().nullable(),
  /** Runs so far (the workflow continues as new to keep each history bounded). */
  runs: z.number().int().positive(),
  startedAt: z.string(),
});
export type CampaignProgress = z.infer<typeof CampaignProgress>;

export const CampaignResult = z.object({
  cancelled: z.boolean(),
  sent: z.number().int().nonnegative(),
  /** Recipients not sent to: on the suppression list (opted out) when their chunk was read. */
  suppressed: z.number().int().nonnegative().default(0),
  counts: StateCounts,
  cost: MinorUnits,
  currency: Currency.nullable(),
  chunks: z.number().int().nonnegative(),
  duplicates: z.number().int().nonnegative(),
  invalid: z.object({ count: z.number().int().nonnegative(), recipients: z.array(InvalidRecipient) }),
  /** Messages that reached no final state within the wait window (first MAX_REPORTED_ITEMS ids). */
  notFinal: z.object({ count: z.number().int().nonnegative(), ids: z.array(z.string()) }),
  estimate: CostEstimate.nullable(),
  runs: z.number().int().positive(),
  startedAt: z.string(),
  completedAt: z.string(),
});
export type CampaignResult = z.infer<typeof CampaignResult>;

// ---------------------------------------------------------------------------------------------------------
// Schedules

export const OVERLAP_POLICIES = [
  'skip',
  'buffer_one',
  'buffer_all',
  'cancel_other',
  'terminate_other',
  'allow_all',
] as const;
export const OverlapPolicy = z.enum(OVERLAP_POLICIES);
export type OverlapPolicy = z.infer<typeof OverlapPolicy>;

/** Month names as Temporal's calendar specs spell them. */
export const MONTHS = [
  'JANUARY',
  'FEBRUARY',
  'MARCH',
  'APRIL',
  'MAY',
  'JUNE',
  'JULY',
  'AUGUST',
  'SEPTEMBER',
  'OCTOBER',
  'NOVEMBER',
  'DECEMBER',
] as const;
const DAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'] as const;

function calendarField<T extends z.ZodType>(unit: T) {
  const range = z.union([
    unit,
    z.strictObject({ start: unit, end: unit.optional(), step: z.number().int().positive().optional() }),
  ]);
  return z.union([z.literal('*'), range, z.array(range).min(1)]).optional();
}

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** A calendar match, as Temporal's CalendarSpec: each field a value, a `{start, end?, step?}` range, a list, or `*`. */
export const CalendarSpec = z.strictObject({
  second: calendarField(int(0, 59)),
  minute: calendarField(int(0, 59)),
  hour: calendarField(int(0, 23)),
  dayOfMonth: calendarField(int(1, 31)),
  month: calendarField(z.enum(MONTHS)),
  year: calendarField(int(2000, 9999)),
  dayOfWeek: calendarField(z.enum(DAYS)),
  comment: z.string().max(200).optional(),
});
export type CalendarSpec = z.infer<typeof CalendarSpec>;

/** When a schedule fires. `at` is a one-off "send at" and cannot be combined with the recurring forms. */
export const ScheduleTiming = z
  .strictObject({
    /** Cron expressions (5-7 fields, or @daily, @every 1h …), read in `timeZone`. */
    cron: z.array(z.string().min(1).max(200)).optional(),
    calendars: z.array(CalendarSpec).optional(),
    intervals: z
      .array(z.strictObject({ everyMs: Millis.min(1000), offsetMs: z.number().int().nonnegative().optional() }))
      .optional(),
    /** One-off: fire once at this instant (ISO 8601 with an offset). */
    at: z.iso.datetime({ offset: true }).optional(),
    timeZone: TimeZone.optional(),
    /** Random delay added to each firing (ms). */
    jitterMs: z
      .number()
      .int()
      .nonnegative()
      .max(24 * 60 * 60 * 1000)
      .optional(),
    startAt: z.iso.datetime({ offset: true }).optional(),
    endAt: z.iso.datetime({ offset: true }).optional(),
  })
  .refine((t) => Boolean(t.cron?.length || t.calendars?.length || t.intervals?.length || t.at), {
    message: 'needs cron, calendars, intervals or at',
  })
  .refine((t) => !t.at || !(t.cron?.length || t.calendars?.length || t.intervals?.length), {
    message: 'at (one-off) cannot be combined with cron, calendars or intervals',
    path: ['at'],
  });
export type ScheduleTiming = z.infer<typeof ScheduleTiming>;

export const ScheduleId = z
  .string()
  .regex(/^[A-Za-z0-9][\w.:-]{0,99}$/, 'must be 1-100 letters, digits, _ . : - (no phone numbers)');

export const SchedulePolicies = z.strictObject({
  /** What happens when a run is due while the previous one still runs. Default `skip`. */
  overlap: OverlapPolicy.optional(),
  /**
   * How late a missed firing (server down) may still run (ms). Default Temporal's (1 year); keep it short
   * for reminders.
   */
  catchupWindowMs: z.number().int().min(10_000).optional(),
  /** Pause the schedule when a run fails. */
  pauseOnFailure: z.boolean().optional(),
});
export type SchedulePolicies = z.infer<typeof SchedulePolicies>;

export const CampaignScheduleInput = z.strictObject({
  id: ScheduleId,
  timing: ScheduleTiming,
  /** The campaign every run starts; its audience is read when the run starts, so each run reaches who is due then. */
  campaign: CampaignInput,
  policies: SchedulePolicies.optional(),
  paused: z.boolean().optional(),
  note: z.string().max(500).optional(),
});
export type CampaignScheduleInput = z.input<typeof CampaignScheduleInput>;

/** `update`: what to change; `campaign` fields are merged into the current campaign. */
export const CampaignScheduleUpdate = z.strictObject({
  timing: ScheduleTiming.optional(),
  campaign: z.record(z.string(), z.unknown()).optional(),
  policies: SchedulePolicies.optional(),
});
export type CampaignScheduleUpdate = z.input<typeof CampaignScheduleUpdate>;
