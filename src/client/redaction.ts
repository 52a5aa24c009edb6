/**
 * What the logging hook may see. The token is never handed to it at all; secrets (OTP codes, signing
 * secrets, credentials in URLs) are always masked; phone numbers, e-mail addresses and message texts
 * are personal data, masked unless the client was built with `logPersonalData: true`. Which keys hold what,
 * and how numbers and texts are masked: src/redaction.ts.
 */
import { keyKind, maskNumber, maskNumbersInText, maskText } from '../redaction.js';

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

function redactLeaf(key: string | undefined, value: unknown, logPersonalData: boolean): unknown {
  const kind = keyKind(key);
  if (kind === 'secret') return SECRET_MASK;
  if (key === 'url' && typeof value === 'string') return maskUrl(value);
  if (typeof value !== 'string') return value;
  if (logPersonalData) return value;
  if (kind === 'number') return maskNumber(value);
  if (kind === 'text') return maskText(value);
  return maskNumbersInText(value);
}

/** A redacted deep copy of a request body, safe to hand to the logger. */
export function redact(value: unknown, logPersonalData: boolean, key?: string): unknown {
  if (Array.isArray(value)) {
    if (keyKind(key) === 'secret') return SECRET_MASK;
    return value.map((item) => redact(item, logPersonalData, key));
  }
  if (typeof value === 'object' && value !== null) {
    if (keyKind(key) === 'secret') return SECRET_MASK;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, logPersonalData, k)]));
  }
  return redactLeaf(key, value, logPersonalData);
}
