/**
 * OTP activities (provider queue). The code exists in clear only inside `verifyOtpCode`: the workflow and
 * its history hold it sealed with the OTP key ring, and the activity opens it just before the call.
 * Each send (a text, or a call reading the code) is first judged by the fraud guard against the OTP record in
 * the message store (shared by every worker): a blocked send never reaches the provider. Each verified code is
 * recorded for the guard too. A text's provider_message_id is recorded as awaited by the session, like any send's.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { OtpSendRequest, OtpVerifyStatus } from '../src/api/otp.js';
import type { MessagingClient } from '../src/client/client.js';
import { RateLimitError } from '../src/client/errors.js';
import { parseRateLimit } from '../src/client/headers.js';
import { type KeyRing, openString } from '../src/crypto/keyring.js';
import { DEFAULT_OTP_GUARD, type OtpGuardConfig, rulesOfPurpose } from '../src/api/otp-guard.js';
import { OTP_BLOCKED, OTP_SOURCE_RATE_LIMITED } from '../src/definitions/otp.js';
import { otpGuardDecisionsCounter } from '../src/metrics/activity-interceptors.js';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';
import type { OtpGuardDecision } from '../src/store/otp-guard.js';
import type { MessageStore } from '../src/store/index.js';
import { outcomeFromStore } from '../src/store/outcome.js';
import { callProvider } from './errors.js';
import { callingWorkflowId } from './message-store.js';
import { recordSent } from '../src/tracing/spans.js';

/** What the workflow keeps of a send: no number, no text. */
export interface SentOtp {
  otpId: string;
  providerMessageId: string;
  /** ISO 8601 */
  expiresAt: string;
  /** In monitor mode, the rule that would have blocked this send. */
  guardFlagged?: string;
  /** The text's final outcome, when the store already held it as the text was recorded (its event came first). */
  alreadyFinal?: MessageOutcome[];
}

/** A code read out in a call: the call's id (GET /voice/{id}). */
export interface PlacedOtpCall {
  callId: string;
  guardFlagged?: string;
}

/** The pending code of `otpId` read out to `recipient`, the number it was texted to. */
export interface CallOtpCodeInput {
  recipient: string;
  otpId: string;
  language?: string;
}

/** Which session a send or verification belongs to, for the OTP record (no number: the session id has none). */
export interface OtpSessionRef {
  purpose: string;
  /** The session's workflow id and first run id. */
  session: string;
  /** The session awaits its text's outcome: the text is recorded with the session as its waiter. */
  awaitsText?: boolean;
}

export interface VerifyOtpCodeInput {
  otpId: string;
  sealedCode: string;
  /** Absent in sessions started before the OTP record existed. */
  session?: string;
}

export interface OtpActivityOptions {
  /** Opens sealed codes (MSGFLOW_OTP_SEAL_KEY / MSGFLOW_ENCRYPTION_KEY); without it verification fails. */
  keyRing?: KeyRing;
  /** The fraud guard's rules (default DEFAULT_OTP_GUARD); null: no guard and no OTP record. */
  guard?: OtpGuardConfig | null;
}

export interface CheckedOtpCode {
  status: OtpVerifyStatus;
  attemptsRemaining: number;
}

type Channel = 'sms' | 'voice';
type Decision = OtpGuardDecision | null;

export const OTP_ACTIVITY_FAILURES = {
  /** The worker has no OTP key ring (MSGFLOW_OTP_SEAL_KEY / MSGFLOW_ENCRYPTION_KEY). */
  keyUnavailable: 'OtpKeyUnavailable',
  /** The sealed code was not sealed with a key of this worker's ring, or was tampered with. */
  sealInvalid: 'OtpSealInvalid',
} as const;

export function createOtpActivities(
  client: MessagingClient,
  store: MessageStore,
  { keyRing, guard = DEFAULT_OTP_GUARD }: OtpActivityOptions = {},
) {
  const signal = () => Context.current().cancellationSignal;

  /** The guard's judgement of one send (null without a guard): counted, and thrown when blocked. */
  async function judge(channel: Channel, number: string, key: string, ref?: OtpSessionRef): Promise<Decision> {
    if (!guard) return null;
    // Sessions started before the OTP record existed send without a reference; they are judged as `otp`.
    const { purpose, session } = ref ?? { purpose: 'otp', session: key };
    const attempt = { key, session, purpose, number, at: Date.now(), channel };
    const decision = await store.otp.judgeSend(attempt, rulesOfPurpose(guard, purpose));
    // A retried send's decision was counted by the try that made it.
    if (!decision.replayed) countDecision(decision);
    if (decision.verdict === 'blocked') throw blocked(decision);
    return decision;
  }

  async function send(request: OtpSendRequest, idempotencyKey: string, decision: OtpGuardDecision | null) {
    const sent = await callProvider(() =>
      client.otp.send(request, { idempotencyKey, signal: signal() }).catch((error: unknown) => {
        throw sourceRateLimited(error) ?? error;
      }),
    );
    // The text's or call's id links the send to its final state (the guard report's conversion per channel).
    if (decision)
      await store.otp.recordCost(idempotencyKey, sent.cost, sent.currency, sent.provider_message_id ?? sent.call_id);
    return sent;
  }

  const flagged = (decision: OtpGuardDecision | null) =>
    decision?.verdict === 'monitored' ? { guardFlagged: decision.reason! } : {};

  return {
    /** Texts a new code; when the session awaits it, records the text with the session as its waiter first. */
    async sendOtpCode(request: OtpSendRequest, idempotencyKey: string, ref?: OtpSessionRef): Promise<SentOtp> {
      const decision = await judge('sms', request.recipient, idempotencyKey, ref);
      const sent = await send({ ...request, channel: 'sms' }, idempotencyKey, decision);
      const providerMessageId = sent.provider_message_id!;
      // Sessions started before they awaited their texts would get signals they never expect at their end.
      const known = ref?.awaitsText
        ? await store.register(callingWorkflowId(), [
            { providerMessageId, number: sent.mobile_number, traceParent: recordSent([providerMessageId]) },
          ])
        : [];
      return {
        otpId: sent.otp_id,
        providerMessageId,
        expiresAt: sent.expires_at,
        ...flagged(decision),
        ...(known.length > 0 ? { alreadyFinal: known.map(outcomeFromStore) } : {}),
      };
    },

    /** Calls the number and reads out the pending code of `otpId`: the session's code, by another channel. */
    async callOtpCode(input: CallOtpCodeInput, idempotencyKey: string, ref: OtpSessionRef): Promise<PlacedOtpCall> {
      const decision = await judge('voice', input.recipient, idempotencyKey, ref);
      const request = {
        recipient: input.recipient,
        channel: 'voice',
        otp_id: input.otpId,
        language: input.language,
      } as const;
      const placed = await send(request, idempotencyKey, decision);
      return { callId: placed.call_id!, ...flagged(decision) };
    },

    async verifyOtpCode({ otpId, sealedCode, session }: VerifyOtpCodeInput): Promise<CheckedOtpCode> {
      if (!keyRing) {
        throw ApplicationFailure.nonRetryable(
          'this worker has no OTP key ring configured',
          OTP_ACTIVITY_FAILURES.keyUnavailable,
        );
      }
      let code: string;
      try {
        code = openString(keyRing, sealedCode);
      } catch {
        throw ApplicationFailure.nonRetryable(
          'the sealed code cannot be opened with this key ring',
          OTP_ACTIVITY_FAILURES.sealInvalid,
        );
      }
      const checked = await callProvider(() => client.otp.verify({ otp_id: otpId, code }, { signal: signal() }));
      // Only this session's workflow verifies this otp_id, one attempt at a time. So `used` on a retry means
      // our earlier try of this same code succeeded and its response was lost: that try's answer stands.
      const status = checked.status === 'used' && Context.current().info.attempt > 1 ? 'verified' : checked.status;
      if (status === 'verified' && session && guard) await store.otp.recordVerified(session, Date.now());
      return { status, attemptsRemaining: checked.attempts_remaining };
    },
  };
}

/** Sends the guard judged, by verdict and reason (the worker's metrics). */
function countDecision({ verdict, reason }: OtpGuardDecision): void {
  otpGuardDecisionsCounter(Context.current().metricMeter).add(1, { verdict, reason: reason ?? 'none' });
}

/** A blocked send: never retried; its reason and wait go to the session (and its history) without the number. */
function blocked({ reason, retryAfterSeconds }: OtpGuardDecision): ApplicationFailure {
  return ApplicationFailure.create({
    type: OTP_BLOCKED,
    message: `the OTP fraud guard blocked this send (${reason})`,
    nonRetryable: true,
    details: [{ reason, retryAfterMs: retryAfterSeconds === null ? null : retryAfterSeconds * 1000 }],
  });
}

/**
 * A 429 on an OTP send while the token still had requests left this window: the provider's per-source-address
 * OTP limit, not the token's. Waiting it out would hold a login for up to a minute, so it fails at once with
 * the provider's Retry-After for the caller to show ("try again in N s"). A 429 without the token's headers,
 * or with none left, is the token's limit and is retried as every provider call is.
 */
function sourceRateLimited(error: unknown): ApplicationFailure | undefined {
  if (!(error instanceof RateLimitError)) return undefined;
  const token = parseRateLimit(error.headers);
  if (!token || token.remaining <= 0) return undefined;
  return ApplicationFailure.create({
    type: OTP_SOURCE_RATE_LIMITED,
    message: 'too many OTP sends from this source address',
    nonRetryable: true,
    details: [{ retryAfterMs: error.retryAfterMs ?? null }],
  });
}
