/**
 * How the ingress decides a delivery is authentic. Standard Webhooks is the default (the spec names none); another
 * provider's scheme plugs in by implementing WebhookVerifier.
 */
import { DEFAULT_TOLERANCE_SECONDS, type VerifyResult, verifyWebhook, webhookKey } from '../api/signature.js';

export type IncomingHeaders = Record<string, string | string[] | undefined>;

export interface WebhookVerifier {
  verify(headers: IncomingHeaders, rawBody: Buffer): VerifyResult;
}

/** Accepts a delivery signed with any of `secrets` (current first, previous while rotating). */
export function standardWebhooksVerifier(
  secrets: string[],
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): WebhookVerifier {
  if (secrets.length === 0) throw new Error('at least one webhook signing secret is required');
  const keys = secrets.map(webhookKey);
  return { verify: (headers, rawBody) => verifyWebhook(headers, rawBody, { secrets: keys, toleranceSeconds }) };
}
