/**
 * Workflow ids, derived deterministically from business keys so that any process — the ingress, a sender,
 * an operator in the UI — reaches the same workflow from the same key. Every prefix is here and only here.
 */

export const WORKFLOW_ID_PREFIXES = {
  sms: 'sms:',
  awaitMessage: 'await:',
  campaign: 'campaign:',
  contacts: 'contacts:',
  otp: 'otp:',
  voice: 'voice:',
} as const;

export function smsWorkflowId(key: string): string {
  return `${WORKFLOW_ID_PREFIXES.sms}${key}`;
}

/** One wait per call (`nonce`): several processes may await the same message independently. */
export function awaitMessageWorkflowId(providerMessageId: string, nonce: string): string {
  return `${WORKFLOW_ID_PREFIXES.awaitMessage}${providerMessageId}:${nonce}`;
}

/** The workflow id of a campaign: its key is the business identity, so a repeated start finds the same run. */
export function campaignWorkflowId(key: string): string {
  return `${WORKFLOW_ID_PREFIXES.campaign}${key}`;
}

/** The key back from a workflow id (`campaign:<key>`, or `campaign:<schedule>-<time>` for a scheduled run). */
export function campaignKeyOf(workflowId: string): string {
  const prefix = WORKFLOW_ID_PREFIXES.campaign;
  return workflowId.startsWith(prefix) ? workflowId.slice(prefix.length) : workflowId;
}

/** A campaign's retry (resending to its failed recipients) is keyed `<key>:retry`; its retry `<key>:retry:retry`. */
export const RETRY_KEY_SUFFIX = ':retry';

export function retryKeyOf(key: string): string {
  return `${key}${RETRY_KEY_SUFFIX}`;
}

/** The key a retry's key retries, or null for a key that is not a retry's. */
export function retriedKeyOf(key: string): string | null {
  return key.endsWith(RETRY_KEY_SUFFIX) && key.length > RETRY_KEY_SUFFIX.length
    ? key.slice(0, -RETRY_KEY_SUFFIX.length)
    : null;
}

export function contactsWorkflowId(key: string): string {
  return `${WORKFLOW_ID_PREFIXES.contacts}${key}`;
}

export function voiceWorkflowId(key: string): string {
  return `${WORKFLOW_ID_PREFIXES.voice}${key}`;
}

/** The follower of a call placed elsewhere (an OTP session's fallback): one per call, by the provider's call id. */
export function followCallWorkflowId(callId: string): string {
  return `${WORKFLOW_ID_PREFIXES.voice}follow:${callId}`;
}

/**
 * An OTP session: `otp:<purpose>:<recipientDigest>`, stable per (purpose, recipient). The caller passes a
 * keyed digest of the recipient (src/starter/otp.ts), so no phone number appears in the id.
 */
export function otpWorkflowIdOf(purpose: string, recipientDigest: string): string {
  return `${WORKFLOW_ID_PREFIXES.otp}${purpose}:${recipientDigest}`;
}

/** Idempotency key of one charged step: stable across activity retries, worker crashes and continue-as-new. */
export function idempotencyKey(workflowId: string, step: string): string {
  return `${workflowId}/${step}`;
}

/**
 * One execution chain of a workflow, across continue-as-new: its id and first run id. A later start with the
 * same workflow id (a new campaign or OTP session for the same key) is another chain, with new idempotency keys.
 */
export function runKeyOf({
  workflowId,
  firstExecutionRunId,
}: {
  workflowId: string;
  firstExecutionRunId: string;
}): string {
  return `${workflowId}/${firstExecutionRunId}`;
}

/**
 * The run backing one `startCampaign` Nexus operation (docs/nexus.md): the campaign's key and the Nexus
 * request's id, so a retried request finds its own run, and two operations on one key each have theirs.
 */
export function nexusCampaignWorkflowId(key: string, requestId: string): string {
  return `nexus-campaign:${key}:${requestId}`;
}
