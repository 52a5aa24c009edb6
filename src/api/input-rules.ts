/**
 * The rules of workflow inputs that a JSON Schema cannot say (one field against another, a template that must
 * parse), each written once: the zod schemas apply them with `refineWith`, and the workflows' own input check
 * (which may not import zod) applies them after the generated JSON Schema holds. Workflow-safe: no zod here.
 */
import { CAMPAIGN_DEFAULTS, CONTACT_CHECK_MAX, RECIPIENT_TIME_ZONE } from './constants.js';
import { parseTemplate, uniformText } from './message-template.js';

/** One problem: the field's path (`sendWindow.end`; empty for the value itself) and what is wrong. */
export interface InputProblem {
  path: string;
  message: string;
}

/** A rule on a value whose shape already holds: its first problem, or undefined. */
export type InputRule<T> = (value: T) => InputProblem | undefined;

const problem = (path: string, message: string): InputProblem => ({ path, message });

/** `rules` applied to the field `key` of an object, when present, their paths under `key`. */
export function within<T>(key: string, rules: readonly InputRule<T>[]): InputRule<Record<string, unknown>> {
  return (value) => {
    if (value[key] === undefined) return undefined;
    for (const rule of rules) {
      const found = rule(value[key] as T);
      if (found) return problem(found.path ? `${key}.${found.path}` : key, found.message);
    }
    return undefined;
  };
}

/** The first problem the rules find, in order. */
export function firstRuleProblem<T>(rules: readonly InputRule<T>[], value: T): InputProblem | undefined {
  for (const rule of rules) {
    const found = rule(value);
    if (found) return found;
  }
  return undefined;
}

/** For zod's `.superRefine`: each rule's problem as an issue at its path (typed structurally: no zod here). */
export function refineWith<T>(rules: readonly InputRule<T>[]) {
  return (value: T, context: { addIssue(issue: { code: 'custom'; message: string; path: string[] }): void }) => {
    for (const rule of rules) {
      const found = rule(value);
      if (found)
        context.addIssue({ code: 'custom', message: found.message, path: found.path ? found.path.split('.') : [] });
    }
  };
}

// --- Campaign message ----------------------------------------------------------------------------------------

export const MESSAGE_TEMPLATE_RULES: readonly InputRule<string>[] = [
  (message) => {
    const parsed = parseTemplate(message);
    return parsed.ok ? undefined : problem('', parsed.reason);
  },
];

// --- Send window ---------------------------------------------------------------------------------------------

interface SendWindowFields {
  start: string;
  end: string;
  timeZone: string;
  timeZoneField?: string;
  defaultTimeZone?: string;
}

export const SEND_WINDOW_RULES: readonly InputRule<SendWindowFields>[] = [
  (w) => (w.start !== w.end ? undefined : problem('end', 'start and end must differ')),
  (w) =>
    w.timeZone === RECIPIENT_TIME_ZONE || (!w.timeZoneField && !w.defaultTimeZone)
      ? undefined
      : problem('timeZone', "timeZoneField and defaultTimeZone need timeZone: 'recipient'"),
];

// --- Campaign ------------------------------------------------------------------------------------------------

interface CampaignFields {
  message: string;
  audience: { type: string };
  sendWindow?: { timeZone: string };
  chunkSize?: number;
  maxOutstanding?: number;
  preflight?: boolean;
  maxCost?: number;
}

/** Rules across the campaign's fields (its message's and send window's own rules are theirs). */
export const CAMPAIGN_RULES: readonly InputRule<CampaignFields>[] = [
  (c) =>
    c.audience.type === 'inline' && c.sendWindow?.timeZone === RECIPIENT_TIME_ZONE
      ? problem(
          'sendWindow.timeZone',
          "timeZone 'recipient' needs a file, URL or loader audience (each recipient's zone is found as it is read)",
        )
      : undefined,
  (c) =>
    c.audience.type === 'inline' && parseTemplate(c.message).ok && uniformText(c.message) === null
      ? problem(
          'message',
          'has {placeholders}, but an inline audience has only numbers: use a file, URL or loader audience with those fields',
        )
      : undefined,
  (c) =>
    (c.maxOutstanding ?? CAMPAIGN_DEFAULTS.maxOutstanding) < (c.chunkSize ?? CAMPAIGN_DEFAULTS.chunkSize)
      ? problem('maxOutstanding', 'must be at least chunkSize')
      : undefined,
  (c) =>
    c.maxCost !== undefined && c.preflight === false
      ? problem('maxCost', 'needs the pre-flight estimate: leave preflight on')
      : undefined,
];

// --- OTP -----------------------------------------------------------------------------------------------------

export const OTP_CHANNELS_RULES: readonly InputRule<readonly string[]>[] = [
  (c) => (c[0] === 'sms' ? undefined : problem('', 'the first channel must be sms (the text that starts the session)')),
  (c) => (new Set(c).size === c.length ? undefined : problem('', 'each channel may be named once')),
];

// --- Contact checks ------------------------------------------------------------------------------------------

interface CheckContactsFields {
  numbers?: readonly unknown[];
  emails?: readonly unknown[];
}

const contactsIn = (i: CheckContactsFields) => (i.numbers?.length ?? 0) + (i.emails?.length ?? 0);

export const CHECK_CONTACTS_RULES: readonly InputRule<CheckContactsFields>[] = [
  (i) => (contactsIn(i) > 0 ? undefined : problem('', 'give at least one number or email')),
  (i) =>
    contactsIn(i) <= CONTACT_CHECK_MAX ? undefined : problem('', `at most ${CONTACT_CHECK_MAX} contacts per check`),
];

// --- By workflow type ----------------------------------------------------------------------------------------

/**
 * What each workflow checks after its input's JSON Schema holds: every rule its zod schema applies, nested
 * ones under their field. test/unit/workflow-input-check.test.ts holds the two to the same verdict.
 */
export const WORKFLOW_INPUT_RULES = {
  sendSms: [],
  awaitMessage: [],
  smsCampaign: [within('message', MESSAGE_TEMPLATE_RULES), within('sendWindow', SEND_WINDOW_RULES), ...CAMPAIGN_RULES],
  otpVerification: [within('channels', OTP_CHANNELS_RULES)],
  voiceCall: [],
  followVoiceCall: [],
  checkContacts: CHECK_CONTACTS_RULES,
} as const satisfies Record<string, readonly InputRule<never>[]>;

/** The workflow types whose first input is checked: those other languages start by name. */
export type WorkflowInputType = keyof typeof WORKFLOW_INPUT_RULES;
