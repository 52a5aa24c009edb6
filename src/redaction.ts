/**
 * What counts as a secret and what as personal data, and how personal data is masked: the one rule that the
 * logs (src/log.ts, and through them the Temporal SDK's logs and the metrics runtime), the HTTP client's
 * logging hook (src/client/redaction.ts) and the audience reports (refused entries) apply. Keys match whole
 * and case-insensitively (`apiKey`, `api_key`); secrets are masked whatever a personal-data setting says.
 * At rest, the store seals numbers instead (src/store/personal-data.ts).
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

export function maskText(value: string): string {
  return `[redacted, ${value.length} chars]`;
}

/** Masks anything that looks like a phone number inside free text (e.g. a provider error message). */
export function maskNumbersInText(text: string): string {
  return text.replace(/\+?\d[\d ()-]{5,}\d/g, (match) =>
    match.replace(/\D/g, '').length >= 7 ? maskNumber(match) : match,
  );
}
