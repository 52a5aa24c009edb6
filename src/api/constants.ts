/**
 * The contract's plain values: state names, limits and defaults, without zod. The schemas in `src/api` are
 * built from them, and workflow code imports them from here, because Temporal evaluates the workflow
 * bundle's modules again for every workflow: zod and the phone-number metadata would cost each message's
 * workflow about a megabyte of code to run. `test/unit/workflow-bundle.test.ts` keeps them out.
 */

// Messages (spec "States and transitions")

/** The five final delivery states. */
export const FINAL_STATUSES = ['delivered', 'undelivered', 'failed', 'rejected', 'expired'] as const;
export type FinalStatus = (typeof FINAL_STATUSES)[number];
/**
 * Non-final states. The spec leaves them open; these are what the sandbox's carrier walks through:
 * `queued` (accepted, waiting for submission) then `sent` (submitted to the carrier).
 */
export const PENDING_STATUSES = ['queued', 'sent'] as const;

export function isFinalStatus(status: string): status is FinalStatus {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}

/** Most recipients one send request may carry; larger campaigns are sent in chunks. */
export const MAX_RECIPIENTS_PER_REQUEST = 1000;
/** Most events one `message.status.batch` webhook body may carry; the ingress rejects the rest. */
export const MAX_EVENTS_PER_BATCH = 1000;
/** Longest text accepted: ten concatenated GSM-7 segments' worth. */
export const MAX_MESSAGE_LENGTH = 1530;
/** Most recipients one `sendSms` may carry; more are a campaign. */
export const MAX_SMS_RECIPIENTS = 50;

/** A recipient's shape: international format, digits only (whether it is a real number needs libphonenumber). */
export const RECIPIENT_DIGITS = /^[1-9]\d{6,14}$/;
/** Approved sender identifiers: alphanumeric (up to 11 characters) or a numeric short/long code. */
/** A team's name (src/api/team-weights.ts): also its campaigns' Temporal fairness key, at most 64 bytes. */
export const TEAM_NAME_PATTERN = /^[A-Za-z0-9][\w.-]{0,63}$/;

export const SENDER_ID_PATTERN = /^(?=.*[A-Za-z0-9])[A-Za-z0-9 ]{1,11}$|^\d{3,15}$/;

// Voice

export const VOICE_PENDING_STATUSES = ['queued', 'ringing', 'in_progress'] as const;
export const VOICE_FINAL_STATUSES = ['completed', 'busy', 'no_answer', 'failed'] as const;

export function isFinalVoiceStatus(status: string): boolean {
  return (VOICE_FINAL_STATUSES as readonly string[]).includes(status);
}

/** `voiceCall` defaults. */
export const VOICE_CALL_DEFAULTS = {
  /** How long to follow the call before reporting its last known state. */
  deadlineMs: 10 * 60 * 1000,
  /** First poll of GET /voice/{id} after the send; the interval then doubles up to pollMaxMs. */
  pollInitialMs: 1000,
  pollMaxMs: 30 * 1000,
} as const;

// OTP

export const OTP_DEFAULT_LENGTH = 6;
/** NIST SP 800-63B: a code sent out of band lives for at most 10 minutes. */
export const OTP_DEFAULT_TTL_SECONDS = 600;
export const OTP_MAX_ATTEMPTS = 5;
/** The provider's bounds on a code's lifetime (seconds): `expires_in` of POST /otp/send. */
export const PROVIDER_OTP_TTL = { min: 30, max: 3600 } as const;

/**
 * `otpVerification` defaults. Lifetime 10 minutes and single use: NIST SP 800-63B (out-of-band secrets) and
 * OWASP ASVS (out-of-band verifiers expire after 10 minutes, are used once). Attempts: both require a limit
 * on failed attempts; 5 matches the provider's own per-code limit. Cooldown, sends and lockout are msgflow's
 * choices that keep a "send me a code" button from being used to flood a phone or reset the lockout.
 */
export const OTP_DEFAULTS = {
  length: OTP_DEFAULT_LENGTH,
  ttlSeconds: OTP_DEFAULT_TTL_SECONDS,
  maxAttempts: OTP_MAX_ATTEMPTS,
  resendCooldownSeconds: 30,
  maxSends: 3,
  lockoutSeconds: 15 * 60,
  channels: ['sms'] as readonly ('sms' | 'voice')[],
  channelTimeoutSeconds: 30,
} as const;

/** A code sealed for the workflow: `v1.<keyId>.<data>` (see src/crypto). */
export const SEALED_CODE_PATTERN = /^v1\.[\w-]{1,32}\.[\w-]+$/;

// Waiting for a message's final state

/** How long a sender waits for a message's final status event before asking the provider. */
export const DEFAULT_WAIT_WINDOW_MS = 6 * 60 * 60 * 1000;

// Campaigns

/** How many invalid recipients and never-final message ids a progress report or result lists (the counts are exact). */
export const MAX_REPORTED_ITEMS = 1000;

/** Most recipients a campaign may carry inline; larger audiences are read in pages from a source. */
export const MAX_INLINE_RECIPIENTS = 10_000;
/** Most messages a campaign may await at once (`maxOutstanding`): their ids are in the run's state. */
export const MAX_OUTSTANDING = 10_000;

export const CAMPAIGN_DEFAULTS = {
  chunkSize: MAX_RECIPIENTS_PER_REQUEST,
  /**
   * Messages sent but not yet final before the campaign stops sending more (bounds the run's state). The
   * most: outcomes are told at most twice a second, so a smaller window held the sends back whenever the
   * provider reported faster than that. The relay's rate, not the window, bounds the signals a run receives.
   */
  maxOutstanding: MAX_OUTSTANDING,
  /**
   * Chunk send requests in flight at once: enough to keep the rate-limited provider queue holding a task
   * whenever the server has a token, through the campaign's turnaround between a send's answer and the next
   * send (4 s of it at 120/min; 4 in flight left gaps on a loaded machine and at each continue-as-new).
   */
  chunksInFlight: 8,
  /** History events after which a run continues as new. */
  maxEventsPerRun: 2000,
  preflight: true,
} as const;

// Contact checks

export const CONTACT_CHECK_MAX = 1000;
export const CONTACT_CHECK_DEFAULT_CONCURRENCY = 10;
/**
 * About 3 history events per check, plus workflow tasks: well under the point where Temporal suggests
 * continuing as new.
 */
export const CONTACT_CHECK_DEFAULT_PER_RUN = 500;

/** `sendWindow.timeZone` for a window in each recipient's own local time. */
export const RECIPIENT_TIME_ZONE = 'recipient';
