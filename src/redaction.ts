/**
 * What counts as a secret and what as personal data, and how each is masked: the one rule (`redact`) that the
 * logs (src/log.ts, and through them the Temporal SDK's logs and the metrics runtime) and the HTTP client's
 * logging hook (src/client/request.ts) apply, and whose masks the audience reports (refused entries) use. Keys
 * match whole and case-insensitively (`apiKey`, `api_key`); secrets are masked whatever a personal-data setting
 * says. At rest, the store seals numbers instead (src/store/personal-data.ts).
 */

const SECRET_KEY = /^(authorization|token|api_?key|secret|secrets|code|otp|password|admin_?token)$/i;
const NUMBER_KEY = /^(mobile_number|recipient|recipients|to|number|e164)$/i;
const TEXT_KEY = /^(message|text|template|body|email)$/i;

/** What a field's key says its value is: a secret, a phone number, free text (personal), or none of these. */
export type KeyKind = 'secret' | 'number' | 'text' | undefined;

export function keyKind(key: string | undefined): KeyKind {
  if (key === undefined) return undefined;
  if (SECRET_KEY.test(key)) return 'secret';
  if (NUMBER_KEY.test(key)) return 'number';
  if (TEXT_KEY.test(key)) return 'text';
  return undefined;
}

/** Keeps the last two digits so a log line can still be told apart from its neighbours. */
export function maskNumber(value: string): string {
  const digits = value.replace(/\D/g, '').length;
  let seen = 0;
  return value.replace(/\d/g, (d) => (++seen > digits - 2 ? d : '*'));
}

const MASKED_TEXT = /^\[redacted, \d+ chars\]$/;

/** A text as its length only; a text masked already stays as it is (a client's entry logged again). */
export function maskText(value: string): string {
  return MASKED_TEXT.test(value) ? value : `[redacted, ${value.length} chars]`;
}

/** An ISO date (`2026-03-02`) has as many digits as a number, but is no one's. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A UUID (a run id, a workflow id made of one), or a number-like run that starts a token: digits inside an id
 * (`4e21`, the hex of a hash) are no one's number, and masking them would break a search by that id.
 */
const UUID_OR_NUMBER =
  /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})|(?<![\p{L}\p{N}_])\+?\d[\d ()-]{5,}\d/giu;

/** Masks anything that looks like a phone number inside free text (e.g. a provider error message). */
export function maskNumbersInText(text: string): string {
  return text.replace(UUID_OR_NUMBER, (match, uuid?: string) =>
    !uuid && match.replace(/\D/g, '').length >= 7 && !ISO_DATE.test(match) ? maskNumber(match) : match,
  );
}

/** What a secret becomes, whatever its shape. */
export const SECRET_MASK = '[secret]';

/** Drops credentials and the query string of a URL; they may carry secrets. */
function maskUrl(value: string): string {
  try {
    const url = new URL(value);
    const hadQuery = url.search !== '';
    url.username = '';
    url.password = '';
    url.search = '';
    return hadQuery ? `${url.toString()}?[redacted]` : url.toString();
  } catch {
    return '[unparsable url]';
  }
}

function redactLeaf(value: unknown, showPersonalData: boolean, key: string | undefined): unknown {
  if (key === 'url' && typeof value === 'string') return maskUrl(value);
  if (showPersonalData || (typeof value !== 'string' && typeof value !== 'number')) return value;
  const kind = keyKind(key);
  if (kind === 'number') return maskNumber(String(value));
  if (kind === 'text') return maskText(String(value));
  return typeof value === 'string' ? maskNumbersInText(value) : value;
}

/**
 * A redacted deep copy of log fields or a request body: secrets always become SECRET_MASK; unless
 * `showPersonalData`, numbers keep their last two digits, texts only their length, and number-like runs in any
 * other text are masked; URLs lose credentials and query; an error becomes its name and (masked) message.
 */
export function redact(value: unknown, showPersonalData = false, key?: string): unknown {
  if (keyKind(key) === 'secret') return SECRET_MASK;
  if (Array.isArray(value)) return value.map((item) => redact(item, showPersonalData, key));
  if (value instanceof Error) return { name: value.name, message: redact(value.message, showPersonalData) };
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, showPersonalData, k)]));
  }
  return redactLeaf(value, showPersonalData, key);
}
