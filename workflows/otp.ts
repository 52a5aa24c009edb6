/**
 * `otpVerification`: one OTP session per (purpose, recipient), owning its code's lifetime.
 *
 * The session sends a code as soon as it starts, then answers two updates: `send` (the first send's
 * answer, or a resend within the cooldown and send limit) and `verify` (one sealed code checked with the
 * provider). Both run one at a time behind a FIFO lock, so two verifications can never both succeed: the
 * second sees the first's result and answers `used`. The session ends when a code is verified, when the
 * current code's lifetime passes (`expired`), or after `lockoutSeconds` once too many wrong codes locked it.
 * Validators refuse what the state already answers (locked, cooling down, finished, malformed) before
 * anything is recorded, so a flood of such calls does not grow the history.
 * The code's text is awaited like any send's: with `channels: ['sms', 'voice']`, a text that is not delivered,
 * or delivered without a verification within `channelTimeoutSeconds`, is followed by a call reading the same
 * code out; each channel delivers at most once, and never after the session has ended or locked.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { createOtpActivities } from '../activities/otp.js';
import type {
  OtpChannelAttempt,
  OtpVerificationInput,
  OtpVerificationResult,
  OtpVerifyAnswer,
} from '../src/api/otp-io.js';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';
import { OTP_REJECTIONS, OTP_SEND_FAILED, otpStateQuery, sendUpdate, verifyUpdate } from '../src/definitions/otp.js';
import { SA } from '../src/definitions/search-attributes.js';
import { INTERACTIVE_PRIORITY, providerTaskQueue } from '../src/definitions/task-queues.js';
import { idempotencyKey } from '../src/definitions/workflow-ids.js';
import { FifoLock } from './fifo-lock.js';
import { FirstOutcomes } from './first-outcomes.js';
import { onMessageOutcomes, releaseMessages } from './message-outcomes.js';
import { countOtpChannelAttempt } from './metrics.js';
import { followPlacedCall } from './otp-call.js';
import { OTP_VERIFY_RETRY, PROVIDER_RETRY } from './retry-policies.js';
import {
  answerWithoutProvider,
  channelAttempted,
  codeChecked,
  codeSent,
  expireIfDue,
  fallbackDueAt,
  nextChannel,
  newSession,
  type OtpSession,
  type OtpSettings,
  otpSettings,
  type Refusal,
  resendDecision,
  resultOf,
  sendAnswerOf,
  sendFailed,
  sendRefusal,
  stateOf,
  textSettled,
  verifyRefusal,
} from './otp-state.js';
import { checkFirstInput } from './input-check.js';

export async function otpVerification(input: OtpVerificationInput): Promise<OtpVerificationResult> {
  checkFirstInput('otpVerification', input);
  const session = openSession(input);
  answerQueriesAndUpdates(session);

  // The first code goes out at once; the `send` update that came with the start is answered by it.
  session.firstSend = session.lock.run(() => sendCode(session));
  await session.firstSend;
  // Called only with a code out, so a failed first send closes the session in the same step (as recorded).
  if (session.state.status === 'pending') {
    await Promise.all([waitForVerificationOrExpiry(session), fallBackWhenDue(session)]);
  }
  if (session.state.status === 'locked') await sitOutLockout(session.state);
  return closeSession(session);
}

type OtpActivities = ReturnType<typeof createOtpActivities>;

/** The patch that moved the session's provider calls to local activities. */
const OTP_CALLS_LOCAL = 'otp-calls-local';
/** The patch that made sessions await their texts' outcomes (and fall back to other channels). */
const OTP_CHANNELS = 'otp-channels';

/**
 * The session's provider calls. A person waits on each: they run as local activities of the session's own
 * worker, one round trip fewer than through the provider queue (the worker holds them to the token's budget).
 * Sessions started before this version keep scheduling them on the provider queue.
 */
function otpCalls(taskQueue: string): Pick<Session, 'provider' | 'verifier'> {
  const send = {
    retry: PROVIDER_RETRY,
    // Someone is waiting for the code: a lost worker is noticed within seconds (the send is idempotent),
    // and past two minutes the send fails rather than arriving too late to matter.
    startToCloseTimeout: '10 seconds',
    scheduleToCloseTimeout: '2 minutes',
  } as const;
  const verify = {
    startToCloseTimeout: '10 seconds',
    // The caller waits synchronously: a few quick tries, then an answer ("unavailable") rather than a hang.
    scheduleToCloseTimeout: '30 seconds',
    retry: OTP_VERIFY_RETRY,
  } as const;
  if (patched(OTP_CALLS_LOCAL)) {
    return {
      provider: proxyLocalActivities<OtpActivities>(send),
      verifier: proxyLocalActivities<OtpActivities>(verify),
    };
  }
  const queued = { taskQueue: providerTaskQueue(taskQueue), priority: INTERACTIVE_PRIORITY };
  return {
    provider: proxyActivities<OtpActivities>({ ...send, ...queued }),
    verifier: proxyActivities<OtpActivities>({ ...verify, ...queued }),
  };
}

/** One run of the session: its settings and state, the lock its updates take turns on, and its activities. */
interface Session {
  input: OtpVerificationInput;
  settings: OtpSettings;
  state: OtpSession;
  lock: FifoLock;
  workflowId: string;
  /** Keys each send's idempotency: per run, so a later session for the same pair gets a new code. */
  runKey: string;
  provider: OtpActivities;
  verifier: OtpActivities;
  /** The first send, once started: the `send` update that came with the start waits for it. */
  firstSend?: Promise<SendFailure | null>;
  /** The texts' final statuses heard so far (the first for each text wins). */
  outcomes: FirstOutcomes;
  /** False for sessions started before OTP_CHANNELS: they neither fall back nor release their texts. */
  followsChannels: boolean;
}

/** Why a send failed: its failure type, how long to wait when the provider or the guard said so, and the guard's reason. */
interface SendFailure {
  type: string;
  retryAfterMs: number | null;
  reason: string | null;
}

function openSession(input: OtpVerificationInput): Session {
  const { workflowId, taskQueue, firstExecutionRunId } = workflowInfo();
  const { provider, verifier } = otpCalls(taskQueue);
  return {
    input,
    settings: otpSettings(input),
    state: newSession(),
    lock: new FifoLock(),
    workflowId,
    runKey: `${workflowId}/${firstExecutionRunId}`,
    provider,
    verifier,
    outcomes: new FirstOutcomes(),
    followsChannels: patched(OTP_CHANNELS),
  };
}

/** The `otpState` query, and the `send` and `verify` updates: validators first, then one at a time. */
function answerQueriesAndUpdates(session: Session): void {
  const { settings, state, lock } = session;
  onMessageOutcomes((outcomes) => textsSettled(session, outcomes));
  setHandler(otpStateQuery, () => stateOf(state, settings));
  setHandler(sendUpdate, () => sendOrResend(session), {
    validator: () => refuseIf(session, sendRefusal(state, settings, Date.now())),
  });
  setHandler(verifyUpdate, (request) => lock.run(() => verifyCode(session, request.sealedCode)), {
    validator: (request) => refuseIf(session, verifyRefusal(state, settings, request)),
  });
}

/** The `send` update: the first send's answer, or a resend decided behind the lock. */
async function sendOrResend(session: Session) {
  const { settings, state, workflowId } = session;
  await condition(() => session.firstSend !== undefined);
  if (state.sends === 0) {
    const failed = await session.firstSend!;
    if (failed) throw sendFailure(failed);
    return sendAnswerOf(state, settings, workflowId, 'sent');
  }
  // A call that arrives while a resend is in flight is answered by that resend, not by a new one.
  const joinedAt = state.sendInFlight ? state.sends : undefined;
  return session.lock.run(async () => {
    const decision = resendDecision(state, settings, Date.now(), joinedAt);
    if (decision === 'finished') throw rejection(session, OTP_REJECTIONS.finished, 'this OTP session has ended');
    if (decision !== 'send') return sendAnswerOf(state, settings, workflowId, decision);
    const failed = await sendCode(session);
    if (failed) throw sendFailure(failed);
    return sendAnswerOf(state, settings, workflowId, 'sent');
  });
}

/** One send; the caller holds the lock. Returns why it failed, when it did. */
async function sendCode(session: Session): Promise<SendFailure | null> {
  const { input, settings, state, runKey, provider, followsChannels } = session;
  state.sendInFlight = true;
  try {
    const sent = await provider.sendOtpCode(
      {
        recipient: input.recipient,
        sender: input.sender,
        template: input.template,
        length: settings.length,
        expires_in: settings.providerTtlSeconds,
      },
      idempotencyKey(runKey, `send-${state.sends + 1}`),
      { purpose: input.purpose, session: runKey, ...(followsChannels ? { awaitsText: true } : {}) },
    );
    codeSent(state, settings, sent, Date.now());
    textsSettled(session, sent.alreadyFinal ?? []);
    return null;
  } catch (error) {
    const failure = { type: failureType(error), ...failureDetailsOf(error) };
    sendFailed(state, failure.type);
    return failure;
  } finally {
    state.sendInFlight = false;
  }
}

/** Final statuses of the session's texts, from the ingress's signal or from the send that recorded them. */
function textsSettled({ state, outcomes }: Session, heard: MessageOutcome[]): void {
  for (const { providerMessageId, status } of outcomes.keep(heard)) {
    if (textSettled(state, providerMessageId, status)) countOtpChannelAttempt('sms', status);
  }
}

/**
 * Delivers the current code over the next channel when its text was not delivered, or once `channelTimeoutMs`
 * passed after it without a verification. A resend restarts the wait for the new code's text.
 */
async function fallBackWhenDue(session: Session): Promise<void> {
  const { state, settings, lock } = session;
  if (!session.followsChannels) return;
  for (;;) {
    const due = fallbackDueAt(state, settings);
    if (due === null) {
      // No channel left: a call placed is followed to its end, outside the lock (verifications go on meanwhile).
      await followPlacedCall(state);
      return;
    }
    if (due > Date.now()) {
      await condition(() => fallbackDueAt(state, settings) !== due, due - Date.now());
    } else {
      // Behind the lock: a verification or resend in flight is answered first, then the state decides again.
      await lock.run(() => deliverOverNextChannel(session));
    }
  }
}

async function deliverOverNextChannel({ input, settings, state, runKey, provider }: Session): Promise<void> {
  const due = fallbackDueAt(state, settings);
  const channel = nextChannel(state, settings);
  if (due === null || due > Date.now() || channel !== 'voice') return;
  let attempt: OtpChannelAttempt;
  try {
    const placed = await provider.callOtpCode(
      { recipient: input.recipient, otpId: state.otpId! },
      idempotencyKey(runKey, channel),
      { purpose: input.purpose, session: runKey },
    );
    attempt = channelAttempted(state, channel, placed.callId, 'placed', Date.now());
  } catch (error) {
    attempt = channelAttempted(state, channel, null, failureType(error), Date.now());
  }
  countOtpChannelAttempt(attempt.channel, attempt.outcome);
}

/** One verification; the caller holds the lock. */
async function verifyCode(
  { settings, state, verifier, runKey }: Session,
  sealedCode: string,
): Promise<OtpVerifyAnswer> {
  const answer = answerWithoutProvider(state, settings, Date.now());
  if (answer !== 'check') return answer;
  let checked;
  try {
    checked = await verifier.verifyOtpCode({ otpId: state.otpId!, sealedCode, session: runKey });
  } catch (error) {
    throw ApplicationFailure.create({
      type: 'OtpVerificationUnavailable',
      message: `the code could not be checked (${failureType(error)}); it was not counted as an attempt`,
      nonRetryable: true,
    });
  }
  return codeChecked(state, settings, checked, Date.now());
}

/** Lives as long as the current code: a resend replaces the code and restarts its lifetime. */
async function waitForVerificationOrExpiry({ state, lock }: Session): Promise<void> {
  while (state.status === 'pending') {
    const deadline = state.expiresAt;
    const moved = await condition(
      () => state.status !== 'pending' || state.expiresAt !== deadline,
      Math.max(1, deadline - Date.now()),
    );
    if (!moved) {
      // Behind the lock: a verification that began in time is answered before the session expires.
      await lock.run(async () => expireIfDue(state, Date.now()));
    }
  }
}

/** Too many wrong codes: refuse codes and new sends (validators answer `locked`) until the lockout ends. */
async function sitOutLockout(state: OtpSession): Promise<void> {
  await sleep(Math.max(1, state.lockedUntil - Date.now()));
}

async function closeSession({ state, followsChannels }: Session): Promise<OtpVerificationResult> {
  upsertSearchAttributes([{ key: SA.finalStatus, value: state.status }]);
  await condition(allHandlersFinished);
  if (followsChannels) {
    // Texts whose final status was not heard before the end are counted as they stand; the store stops
    // routing their events here. Released after the last update's answer, never in the task that answers it:
    // an outcome signal arriving as the session completes must not fail the task that carries an answer.
    for (const text of state.attempts) if (text.outcome === 'sent') countOtpChannelAttempt(text.channel, 'sent');
    await releaseMessages();
  }
  return resultOf(state);
}

function refuseIf(session: Session, refusal: Refusal | null): void {
  if (refusal) throw rejection(session, refusal.type, refusal.message);
}

/** A refused update; the facade reads the session's state from its details. */
function rejection({ state, settings }: Session, type: string, message: string) {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: [stateOf(state, settings)] });
}

function sendFailure({ type, retryAfterMs, reason }: SendFailure) {
  return ApplicationFailure.create({
    type: OTP_SEND_FAILED,
    message: `the code could not be sent (${type})`,
    nonRetryable: true,
    details: [type, retryAfterMs, reason],
  });
}

/** The wait the provider (or the guard) asked for and the guard's reason, from the failure's `{ retryAfterMs, reason }`. */
function failureDetailsOf(error: unknown): Pick<SendFailure, 'retryAfterMs' | 'reason'> {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  const first = (cause instanceof ApplicationFailure ? (cause.details ?? [])[0] : undefined) as
    { retryAfterMs?: unknown; reason?: unknown } | undefined;
  return {
    retryAfterMs: typeof first?.retryAfterMs === 'number' ? first.retryAfterMs : null,
    reason: typeof first?.reason === 'string' ? first.reason : null,
  };
}

/** The failure type behind an activity failure (e.g. InsufficientBalance), or a generic label. */
function failureType(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure && cause.type) return cause.type;
  return cause instanceof Error ? cause.name : 'UnknownFailure';
}
