/**
 * OTP for backend services: `sendOtp` starts (or resends in) the session of a (purpose, recipient) with
 * update-with-start and answers once the provider accepted the code; `verifyOtp` checks a code with one
 * update and answers synchronously — also after the session has ended (its final outcome, `expired` when
 * there is none). Rejections the workflow's validators raise become plain answers here.
 *
 * Policy for a send when the pair already has a running session: it is a resend request, subject to the
 * session's cooldown and send limit (`cooldown` / `limit_reached`), refused while locked (`locked`); the
 * session keeps the settings it started with. Once a session has ended, a send starts a new one.
 */
import { OtpBlockReason } from '../api/otp-guard.js';
import { createHmac } from 'node:crypto';
import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowFailedError,
  WorkflowIdConflictPolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type {
  OtpSendAnswer,
  OtpState,
  OtpVerificationInput,
  OtpVerificationResult,
  OtpVerifyAnswer,
  VerifyOtpInput,
} from '../api/otp-io.js';
import { sealString } from '../crypto/keyring.js';
import type { OtpKeys } from '../crypto/otp-keys.js';
import {
  OTP_REJECTIONS,
  OTP_BLOCKED,
  OTP_SEND_FAILED,
  OTP_SOURCE_RATE_LIMITED,
  otpStateQuery,
  sendUpdate,
  verifyUpdate,
} from '../definitions/otp.js';
import { SA } from '../definitions/search-attributes.js';
import { INTERACTIVE_PRIORITY } from '../definitions/task-queues.js';
import { otpWorkflowIdOf } from '../definitions/workflow-ids.js';
import type { otpVerification } from '../../workflows/otp.js';
import { sleep } from '../sleep.js';

/** The provider could not take the code (e.g. InsufficientBalance, ProviderValidationFailed). */
export class OtpSendFailedError extends Error {
  override name = 'OtpSendFailedError';
  constructor(readonly failureType: string) {
    super(`the OTP could not be sent (${failureType})`);
  }
}

/**
 * The provider refused the send under its per-source-address OTP limit: answered at once, not waited out.
 * `retryAfterSeconds` is the provider's Retry-After (what a login screen shows as "try again in N s"); null
 * when it gave none. Nothing was charged; a later send starts or resumes the session.
 */
export class OtpRateLimitedError extends Error {
  override name = 'OtpRateLimitedError';
  constructor(readonly retryAfterSeconds: number | null) {
    super(
      retryAfterSeconds === null
        ? 'too many OTP sends from this address; try again later'
        : `too many OTP sends from this address; try again in ${retryAfterSeconds} s`,
    );
  }
}

/**
 * The fraud guard kept the send from the provider (nothing was sent or charged). `reason` names the rule:
 * `deny_list`, `country_not_allowed`, `prefix_velocity`, `country_velocity` or `low_conversion`;
 * `retryAfterSeconds` says when the rule may let a send through again (null for lists and countries).
 */
export class OtpBlockedError extends Error {
  override name = 'OtpBlockedError';
  constructor(
    readonly reason: OtpBlockReason,
    readonly retryAfterSeconds: number | null,
  ) {
    super(`the OTP send was blocked by the fraud guard (${reason})`);
  }
}

/** The provider could not check the code just now; the attempt was not counted. Safe to retry. */
export class OtpVerificationUnavailableError extends Error {
  override name = 'OtpVerificationUnavailableError';
}

/** Session ids: `otp:<purpose>:<base64url HMAC-SHA256(recipient)>` — stable per pair, with no number in it. */
export function otpWorkflowId(hashKey: Buffer, purpose: string, recipient: string): string {
  const digest = createHmac('sha256', hashKey).update(recipient).digest('base64url');
  return otpWorkflowIdOf(purpose, digest);
}

export interface OtpTarget {
  client: Client;
  taskQueue: string;
  keys: OtpKeys;
}

/** How long `sendOtp` waits for a session that has just ended to close before starting the next one. */
const CLOSING_RETRY_MS = 100;
const CLOSING_RETRIES = 20;

export async function sendOtp(
  { client, taskQueue, keys }: OtpTarget,
  input: OtpVerificationInput,
): Promise<OtpSendAnswer> {
  const workflowId = otpWorkflowId(keys.hashKey, input.purpose, input.recipient);
  for (let attempt = 0; ; attempt++) {
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof otpVerification>('otpVerification', {
      workflowId,
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      typedSearchAttributes: [
        { key: SA.kind, value: 'otp' },
        ...(input.sender ? [{ key: SA.sender, value: input.sender }] : []),
      ],
      staticSummary: `One-time password for ${input.purpose}`,
      // A person is waiting: its workflow tasks go before queued campaign work.
      priority: INTERACTIVE_PRIORITY,
    });
    try {
      return await client.workflow.executeUpdateWithStart(sendUpdate, { startWorkflowOperation });
    } catch (error) {
      const rejection = rejectionOf(error);
      if (!rejection) throw error;
      switch (rejection.type) {
        case OTP_REJECTIONS.cooldown:
          return answerFrom(workflowId, 'cooldown', rejection.state);
        case OTP_REJECTIONS.sendLimit:
          return answerFrom(workflowId, 'limit_reached', rejection.state);
        case OTP_REJECTIONS.locked:
          return answerFrom(workflowId, 'locked', rejection.state);
        case OTP_REJECTIONS.finished:
          // The previous session has just ended and is closing: once it has, this starts a new one.
          if (attempt >= CLOSING_RETRIES) throw error;
          await sleep(CLOSING_RETRY_MS);
          continue;
        case OTP_SEND_FAILED:
          throw sendFailedError(rejection.details);
        default:
          throw error;
      }
    }
  }
}

export async function verifyOtp({ client, keys }: OtpTarget, input: VerifyOtpInput): Promise<OtpVerifyAnswer> {
  const handle = client.workflow.getHandle<typeof otpVerification>(
    otpWorkflowId(keys.hashKey, input.purpose, input.recipient),
  );
  try {
    // Sealed here, opened only by the worker's verify activity: the history never holds the code.
    return await handle.executeUpdate(verifyUpdate, { args: [{ sealedCode: sealString(keys.sealing, input.code) }] });
  } catch (error) {
    // No session, or one that closed before this arrived: its final outcome answers.
    if (error instanceof WorkflowNotFoundError) return answerOfClosed(() => handle.result());
    const rejection = rejectionOf(error);
    if (!rejection) throw error;
    switch (rejection.type) {
      case OTP_REJECTIONS.locked:
        return { status: 'locked', attemptsRemaining: 0 };
      case OTP_REJECTIONS.wrongLength:
        // A code of the wrong length is simply wrong; it is refused before it counts as an attempt.
        return { status: 'invalid', attemptsRemaining: rejection.state?.attemptsRemaining ?? 0 };
      case OTP_REJECTIONS.finished:
        return answerOfClosed(() => handle.result());
      case 'OtpVerificationUnavailable':
        throw new OtpVerificationUnavailableError(rejection.message);
      default:
        throw error;
    }
  }
}

/** The session's current state, or null when the pair has no running session. */
export async function otpState(
  { client, keys }: OtpTarget,
  purpose: string,
  recipient: string,
): Promise<OtpState | null> {
  const handle = client.workflow.getHandle<typeof otpVerification>(otpWorkflowId(keys.hashKey, purpose, recipient));
  try {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return null;
    return await handle.query(otpStateQuery);
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return null;
    throw error;
  }
}

function sendFailedError([type, retryAfterMs, reason]: unknown[]): Error {
  const retryAfterSeconds = typeof retryAfterMs === 'number' ? Math.ceil(retryAfterMs / 1000) : null;
  if (type === OTP_SOURCE_RATE_LIMITED) return new OtpRateLimitedError(retryAfterSeconds);
  if (type === OTP_BLOCKED) {
    const parsed = OtpBlockReason.safeParse(reason);
    if (parsed.success) return new OtpBlockedError(parsed.data, retryAfterSeconds);
  }
  return new OtpSendFailedError(String(type ?? 'unknown'));
}

/** A verification against an ended session: a verified code is `used` now; anything else is over. */
async function answerOfClosed(result: () => Promise<OtpVerificationResult>): Promise<OtpVerifyAnswer> {
  try {
    const outcome = await result();
    if (outcome.status === 'verified') return { status: 'used', attemptsRemaining: 0 };
    if (outcome.status === 'locked') return { status: 'locked', attemptsRemaining: 0 };
    return { status: 'expired', attemptsRemaining: 0 };
  } catch (error) {
    // Never started, past retention, terminated or failed: no code can be verified.
    if (error instanceof WorkflowNotFoundError || error instanceof WorkflowFailedError)
      return { status: 'expired', attemptsRemaining: 0 };
    throw error;
  }
}

interface Rejection {
  type: string;
  message: string;
  details: unknown[];
  state: OtpState | undefined;
}

/** An update refused by a validator, or failed by its handler, with an application failure type. */
function rejectionOf(error: unknown): Rejection | undefined {
  if (
    !(error instanceof WorkflowUpdateFailedError) ||
    !(error.cause instanceof ApplicationFailure) ||
    !error.cause.type
  )
    return undefined;
  const details = (error.cause.details ?? []) as unknown[];
  const first = details[0];
  const state = first && typeof first === 'object' && 'status' in first ? (first as OtpState) : undefined;
  return { type: error.cause.type, message: error.cause.message, details, state };
}

function answerFrom(workflowId: string, status: OtpSendAnswer['status'], state: OtpState | undefined): OtpSendAnswer {
  return {
    workflowId,
    status,
    sends: state?.sends ?? 0,
    sendsRemaining: state?.sendsRemaining ?? 0,
    expiresAt: state?.expiresAt ?? null,
    resendAvailableAt: state?.resendAvailableAt ?? null,
    lockedUntil: state?.lockedUntil ?? null,
  };
}
