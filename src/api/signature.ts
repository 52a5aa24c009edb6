/**
 * Webhook signatures, Standard Webhooks style (the spec names none): HMAC-SHA256 over `${id}.${timestamp}.${body}`
 * with the base64 key of a `whsec_` secret, sent as `v1,<base64>` in `webhook-signature` beside
 * `webhook-id` and `webhook-timestamp` (Unix seconds). Several space-separated signatures may be sent
 * so a receiver can accept both secrets during a rotation.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;
const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/**
 * A signing secret (`whsec_` and base64) as its HMAC key. A receiver makes it once: Node prepares a key given
 * as bytes again at every HMAC, which costs several times the HMAC of a small body.
 */
export function webhookKey(secret: string): KeyObject {
  const bytes = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return createSecretKey(Buffer.from(bytes, 'base64'));
}

function hmac(secret: string | KeyObject, id: string, timestamp: string, body: string | Buffer): Buffer {
  const key = typeof secret === 'string' ? webhookKey(secret) : secret;
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The three headers of a signed delivery; one signature per secret (pass two while rotating). */
export function signWebhook(
  secrets: string[],
  id: string,
  timestampSeconds: number,
  body: string | Buffer,
): Record<string, string> {
  const timestamp = String(timestampSeconds);
  const signatures = secrets.map((s) => `v1,${hmac(s, id, timestamp, body).toString('base64')}`);
  return {
    [SIGNATURE_HEADERS.id]: id,
    [SIGNATURE_HEADERS.timestamp]: timestamp,
    [SIGNATURE_HEADERS.signature]: signatures.join(' '),
  };
}

export type VerifyFailure = 'missing_headers' | 'stale_timestamp' | 'bad_signature';

export type VerifyResult = { ok: true; id: string } | { ok: false; reason: VerifyFailure };

export interface VerifyOptions {
  /** Accepted secrets, or their keys (`webhookKey`): the current one, plus the previous one while rotating. */
  secrets: Array<string | KeyObject>;
  toleranceSeconds?: number;
  nowSeconds?: number;
}

/** Checks a delivery's signature in constant time against every accepted secret. */
export function verifyWebhook(
  headers: Record<string, string | string[] | undefined>,
  rawBody: string | Buffer,
  { secrets, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, nowSeconds = Math.floor(Date.now() / 1000) }: VerifyOptions,
): VerifyResult {
  const id = single(headers[SIGNATURE_HEADERS.id]);
  const timestamp = single(headers[SIGNATURE_HEADERS.timestamp]);
  const signatureHeader = single(headers[SIGNATURE_HEADERS.signature]);
  if (!id || !timestamp || !signatureHeader) return { ok: false, reason: 'missing_headers' };

  const sentAt = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - sentAt) > toleranceSeconds) {
    return { ok: false, reason: 'stale_timestamp' };
  }

  const offered = signatureHeader
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  for (const secret of secrets) {
    const expected = hmac(secret, id, timestamp, rawBody);
    if (offered.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected))) {
      return { ok: true, id };
    }
  }
  return { ok: false, reason: 'bad_signature' };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
