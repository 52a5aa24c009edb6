/**
 * What the logging hook may see. The token is never handed to it at all; secrets (OTP codes, signing
 * secrets, credentials in URLs) are always masked; phone numbers, e-mail addresses and message texts
 * are personal data, masked unless the client was built with `logPersonalData: true`.
 */

/** Keys whose values are secrets: masked whatever `logPersonalData` says. */
const SECRET_KEYS = new Set(['code', 'secret', 'token', 'password', 'api_key']);
/** Keys holding phone numbers. */
const NUMBER_KEYS = new Set(['recipients', 'recipient', 'mobile_number', 'number', 'e164', 'to']);
/** Keys holding free text or other personal data. */
const TEXT_KEYS = new Set(['message', 'text', 'template', 'email']);

export const SECRET_MASK = '[secret]';

/** Keeps the last two digits so a log line can still be told apart from its neighbours. */
export function maskNumber(value: string): string {
  const digits = value.replace(/\D/g, '').length;
  let seen = 0;
  return value.replace(/\d/g, (d) => (++seen > digits - 2 ? d : '*'));
}

export function maskText(value: string): string {
  return `[redacted, ${value.length} chars]`;
}

/** Masks anything that looks like a phone number inside free text (e.g. a provider error message). */
export function maskNumbersInText(text: string): string {
  return text.replace(/\+?\d[\d ()-]{5,}\d/g, (match) =>
    match.replace(/\D/g, '').length >= 7 ? maskNumber(match) : match,
  );
}

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

function redactLeaf(key: string | undefined, value: unknown, logPersonalData: boolean): unknown {
  if (key !== undefined && SECRET_KEYS.has(key)) return SECRET_MASK;
  if (key === 'url' && typeof value === 'string') return maskUrl(value);
  if (typeof value !== 'string') return value;
  if (logPersonalData) return value;
  if (key !== undefined && NUMBER_KEYS.has(key)) return maskNumber(value);
  if (key !== undefined && TEXT_KEYS.has(key)) return maskText(value);
  return maskNumbersInText(value);
}

/** A redacted deep copy of a request body, safe to hand to the logger. */
export function redact(value: unknown, logPersonalData: boolean, key?: string): unknown {
  if (Array.isArray(value)) {
    if (key !== undefined && SECRET_KEYS.has(key)) return SECRET_MASK;
    return value.map((item) => redact(item, logPersonalData, key));
  }
  if (typeof value === 'object' && value !== null) {
    if (key !== undefined && SECRET_KEYS.has(key)) return SECRET_MASK;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, logPersonalData, k)]));
  }
  return redactLeaf(key, value, logPersonalData);
}
