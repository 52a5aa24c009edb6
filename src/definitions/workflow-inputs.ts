/**
 * The shape of each workflow's first input, checked by the workflow itself before anything else (a workflow
 * started by type name from another language gets no other check). Mirrors the zod schemas of src/api
 * without zod (workflow code may not import it): test/unit/workflow-input-shapes.test.ts holds both to the
 * same verdict. Whether a number is a real one is the activities' check (it needs libphonenumber).
 */
import {
  CAMPAIGN_DEFAULTS,
  CONTACT_CHECK_MAX,
  MAX_INLINE_RECIPIENTS,
  MAX_MESSAGE_LENGTH,
  MAX_OUTSTANDING,
  MAX_RECIPIENTS_PER_REQUEST,
  MAX_SMS_RECIPIENTS,
  PROVIDER_OTP_TTL,
  RECIPIENT_DIGITS,
  RECIPIENT_TIME_ZONE,
  SENDER_ID_PATTERN,
  TEAM_NAME_PATTERN,
} from '../api/constants.js';
import { parseTemplate, uniformText } from '../api/message-template.js';
import {
  anyObject,
  boolean,
  fields,
  integer,
  list,
  oneOf,
  optional,
  refined,
  type Shape,
  tagged,
  text,
} from './input-shapes.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const recipient = text({
  pattern: RECIPIENT_DIGITS,
  hint: 'not a phone number (international digits, e.g. 2348012345678)',
});
const sender = text({ pattern: SENDER_ID_PATTERN, hint: 'must be 1-11 letters/digits, or a number of 3-15 digits' });
const millis = (maxDays: number) => integer({ min: 1, max: maxDays * DAY_MS });

export const SEND_SMS_INPUT: Shape = fields({
  recipients: list(recipient, { min: 1, max: MAX_SMS_RECIPIENTS }),
  sender,
  message: text({ min: 1, max: MAX_MESSAGE_LENGTH }),
  waitWindowMs: optional(millis(30)),
});

export const AWAIT_MESSAGE_INPUT: Shape = fields({
  providerMessageId: text({ min: 1, max: 200 }),
  waitWindowMs: optional(millis(30)),
});

export const OTP_VERIFICATION_INPUT: Shape = fields({
  purpose: text({ pattern: /^[a-z0-9][a-z0-9_-]{0,31}$/, hint: 'must be 1-32 lowercase letters, digits, _ or -' }),
  recipient,
  sender: optional(sender),
  template: optional(
    refined(text({ min: 6, max: 300 }), (t: string) => t.includes('{code}'), 'must contain the {code} placeholder'),
  ),
  length: optional(integer({ min: 4, max: 10 })),
  ttlSeconds: optional(integer({ min: 1, max: PROVIDER_OTP_TTL.max })),
  maxAttempts: optional(integer({ min: 1, max: 10 })),
  resendCooldownSeconds: optional(integer({ min: 0, max: 3600 })),
  maxSends: optional(integer({ min: 1, max: 10 })),
  lockoutSeconds: optional(integer({ min: 0, max: 24 * 60 * 60 })),
  channels: optional(
    refined(
      list(oneOf(['sms', 'voice']), { min: 1 }),
      (c: string[]) => c[0] === 'sms' && new Set(c).size === c.length,
      'the first channel must be sms, and each named once',
    ),
  ),
  channelTimeoutSeconds: optional(integer({ min: 1, max: 3600 })),
});

export const VOICE_CALL_INPUT: Shape = fields({
  recipient,
  message: text({ min: 1, max: 1000 }),
  sender: optional(sender),
  language: optional(text({ pattern: /^[a-z]{2}(-[A-Z]{2})?$/, hint: 'must be a language tag like en-US' })),
  repeat: optional(integer({ min: 1, max: 3 })),
  deadlineMs: optional(millis(1)),
  pollInitialMs: optional(millis(1)),
  pollMaxMs: optional(millis(1)),
});

export const FOLLOW_VOICE_CALL_INPUT: Shape = fields({
  callId: text({ min: 1, max: 200 }),
  deadlineMs: optional(millis(1)),
});

const countOf = (value: unknown) => (Array.isArray(value) ? value.length : 0);

export const CHECK_CONTACTS_INPUT: Shape = fields(
  {
    numbers: optional(list(text({ min: 3, max: 32 }), { max: CONTACT_CHECK_MAX })),
    emails: optional(list(text({ min: 3, max: 254 }), { max: CONTACT_CHECK_MAX })),
    concurrency: optional(integer({ min: 1, max: 50 })),
    checksPerRun: optional(integer({ min: 1, max: CONTACT_CHECK_MAX })),
  },
  (i) =>
    countOf(i.numbers) + countOf(i.emails) > 0 ? undefined : { path: '', message: 'give at least one number or email' },
  (i) =>
    countOf(i.numbers) + countOf(i.emails) <= CONTACT_CHECK_MAX
      ? undefined
      : { path: '', message: `at most ${CONTACT_CHECK_MAX} contacts per check` },
);

const column = text({ min: 1, max: 100 });
const format = oneOf(['csv', 'ndjson', 'txt']);
const delimiter = refined(
  text({ min: 1, max: 1 }),
  (c: string) => !/["\r\n]/.test(c),
  'cannot be a quote or a line break',
);

const AUDIENCE: Shape = tagged('type', {
  inline: fields({
    type: text(),
    recipients: list(text({ max: 64 }), { min: 1, max: MAX_INLINE_RECIPIENTS }),
  }),
  file: fields({
    type: text(),
    path: refined(text({ min: 1, max: 4096 }), (p: string) => p.startsWith('/'), 'must be an absolute path'),
    format: optional(format),
    column: optional(column),
    delimiter: optional(delimiter),
  }),
  url: fields({
    type: text(),
    url: text({ pattern: /^https?:\/\/[^\s/]+/, hint: 'must be an http(s) URL' }),
    format: optional(format),
    column: optional(column),
    delimiter: optional(delimiter),
  }),
  loader: fields({
    type: text(),
    name: text({ pattern: /^[A-Za-z][\w.-]{0,63}$/, hint: 'must be a loader name: letters, digits, _ . -' }),
    params: optional(anyObject),
  }),
});

const clock = text({ pattern: /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/, hint: 'must be a local time HH:MM or HH:MM:SS' });
const timeZone = text({ min: 1, max: 64 });

const SEND_WINDOW: Shape = fields(
  {
    start: clock,
    end: clock,
    timeZone,
    days: optional(list(oneOf(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']), { min: 1, max: 7 })),
    timeZoneField: optional(text({ min: 1, max: 100 })),
    defaultTimeZone: optional(timeZone),
  },
  (w) => (w.start !== w.end ? undefined : { path: 'end', message: 'start and end must differ' }),
  (w) =>
    w.timeZone === RECIPIENT_TIME_ZONE || (!w.timeZoneField && !w.defaultTimeZone)
      ? undefined
      : { path: 'timeZone', message: "timeZoneField and defaultTimeZone need timeZone: 'recipient'" },
);

interface CampaignFields {
  message: string;
  audience: { type: string };
  sendWindow?: { timeZone: string };
  chunkSize?: number;
  maxOutstanding?: number;
  maxEventsPerRun?: number;
}

export const CAMPAIGN_INPUT: Shape = fields(
  {
    sender,
    message: refined(
      text({ min: 1, max: MAX_MESSAGE_LENGTH }),
      (m: string) => parseTemplate(m).ok,
      'is not a valid template',
    ),
    audience: AUDIENCE,
    chunkSize: optional(integer({ min: 1, max: MAX_RECIPIENTS_PER_REQUEST })),
    chunksInFlight: optional(integer({ min: 1, max: 16 })),
    sendWindow: optional(SEND_WINDOW),
    waitWindowMs: optional(millis(30)),
    preflight: optional(boolean),
    maxOutstanding: optional(integer({ min: 1, max: MAX_OUTSTANDING })),
    defaultCountry: optional(
      text({ pattern: /^[A-Z]{2}$/, hint: 'must be an ISO 3166-1 alpha-2 country code, e.g. NG' }),
    ),
    maxEventsPerRun: optional(integer({ min: 200, max: 10_000 })),
    team: optional(
      text({ pattern: TEAM_NAME_PATTERN, hint: 'must be a team name: letters, digits, _ . - (at most 64)' }),
    ),
  },
  (value) => campaignRule(value as unknown as CampaignFields),
);

function campaignRule(c: CampaignFields) {
  const inline = c.audience.type === 'inline';
  if (inline && c.sendWindow?.timeZone === RECIPIENT_TIME_ZONE)
    return { path: 'sendWindow.timeZone', message: "timeZone 'recipient' needs a file, URL or loader audience" };
  if (inline && uniformText(c.message) === null)
    return { path: 'message', message: 'has {placeholders}, but an inline audience has only numbers' };
  if ((c.maxOutstanding ?? CAMPAIGN_DEFAULTS.maxOutstanding) < (c.chunkSize ?? CAMPAIGN_DEFAULTS.chunkSize))
    return { path: 'maxOutstanding', message: 'must be at least chunkSize' };
  return undefined;
}
