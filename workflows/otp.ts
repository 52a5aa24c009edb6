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
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { CheckedOtpCode, createOtpActivities } from '../activities/otp.js';
import { OTP_DEFAULTS, PROVIDER_OTP_TTL } from '../src/api/constants.js';
import type {
  OtpSendAnswer,
  OtpState,
  OtpVerificationInput,
  OtpVerificationResult,
  OtpVerifyAnswer,
} from '../src/api/otp-io.js';
import { SA } from '../src/definitions/search-attributes.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { idempotencyKey } from '../src/definitions/workflow-ids.js';
import {
  isOtpVerifyUpdate,
  OTP_REJECTIONS,
  OTP_SEND_FAILED,
  otpStateQuery,
  sealedCodeLength,
  sendUpdate,
  verifyUpdate,
} from '../src/definitions/otp.js';
import { PROVIDER_ACTIVITY_OPTIONS } from './options.js';

/**
 * Priority on the shared provider queue: a person is waiting for this code, campaign traffic can wait
 * (lower keys go first, where the server has task-queue priority enabled; elsewhere it is ignored).
 */
const OTP_PRIORITY = { priorityKey: 1 };

/** Runs tasks one after another in arrival order (a promise chain: deterministic in the workflow sandbox). */
class FifoLock {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

export async function otpVerification(input: OtpVerificationInput): Promise<OtpVerificationResult> {
  const settings = { ...OTP_DEFAULTS, ...definedOnly(input) };
  const ttlMs = settings.ttlSeconds * 1000;
  const cooldownMs = settings.resendCooldownSeconds * 1000;
  const lockoutMs = settings.lockoutSeconds * 1000;
  const { workflowId, taskQueue, firstExecutionRunId } = workflowInfo();

  const provider = proxyActivities<ReturnType<typeof createOtpActivities>>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: providerTaskQueue(taskQueue),
    // Someone is waiting for the code: a lost worker is noticed within seconds (the send is idempotent),
    // and past two minutes the send fails rather than arriving too late to matter.
    startToCloseTimeout: '10 seconds',
    scheduleToCloseTimeout: '2 minutes',
    priority: OTP_PRIORITY,
  });
  const verifier = proxyActivities<ReturnType<typeof createOtpActivities>>({
    taskQueue: providerTaskQueue(taskQueue),
    startToCloseTimeout: '10 seconds',
    // The caller waits synchronously: a few quick tries, then an answer ("unavailable") rather than a hang.
    scheduleToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '200 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: '2 seconds',
      maximumAttempts: 5,
    },
    priority: OTP_PRIORITY,
  });

  // Declared wide (`as`): handlers change it behind the type checker's back.
  let status = 'sending' as OtpState['status'];
  let sends = 0;
  let sendInFlight = false;
  let otpId: string | undefined;
  let expiresAt = 0;
  let lastSentAt = 0;
  let failedAttempts = 0;
  let lockedUntil = 0;
  let verifiedAt: string | null = null;
  let failure: string | null = null;
  const lock = new FifoLock();

  const iso = (ms: number) => new Date(ms).toISOString();
  const attemptsRemaining = () => Math.max(0, settings.maxAttempts - failedAttempts);
  const sendsRemaining = () => Math.max(0, settings.maxSends - sends);
  const state = (): OtpState => ({
    status,
    sends,
    sendsRemaining: sendsRemaining(),
    attemptsRemaining: attemptsRemaining(),
    expiresAt: expiresAt ? iso(expiresAt) : null,
    resendAvailableAt: sends > 0 && sendsRemaining() > 0 ? iso(lastSentAt + cooldownMs) : null,
    lockedUntil: lockedUntil ? iso(lockedUntil) : null,
  });
  const sendAnswer = (answer: OtpSendAnswer['status']): OtpSendAnswer => {
    const { sends: n, sendsRemaining: left, expiresAt: expires, resendAvailableAt, lockedUntil: until } = state();
    return {
      workflowId,
      status: answer,
      sends: n,
      sendsRemaining: left,
      expiresAt: expires,
      resendAvailableAt,
      lockedUntil: until,
    };
  };
  const reject = (type: string, message: string) =>
    ApplicationFailure.create({ type, message, nonRetryable: true, details: [state()] });
  const finished = () => status === 'verified' || status === 'expired' || status === 'failed';
  const lockSession = () => {
    status = 'locked';
    lockedUntil = Date.now() + lockoutMs;
  };

  /** One send; the caller holds the lock. Returns the failure type when it failed (a failed first send ends the session). */
  const sendCode = async (): Promise<string | null> => {
    sendInFlight = true;
    try {
      const sent = await provider.sendOtpCode(
        {
          recipient: input.recipient,
          sender: input.sender,
          template: input.template,
          length: settings.length,
          expires_in: Math.max(settings.ttlSeconds, PROVIDER_OTP_TTL.min),
        },
        // Per run, not per workflow id: a later session for the same pair must get a new code.
        idempotencyKey(`${workflowId}/${firstExecutionRunId}`, `send-${sends + 1}`),
      );
      sends += 1;
      otpId = sent.otpId;
      lastSentAt = Date.now();
      // The session's lifetime, not the provider's (which may be longer: see PROVIDER_OTP_TTL).
      expiresAt = Math.min(Date.parse(sent.expiresAt), lastSentAt + ttlMs);
      if (status === 'sending') status = 'pending';
      return null;
    } catch (error) {
      const type = failureType(error);
      if (status === 'sending') {
        status = 'failed';
        failure = type;
      }
      return type;
    } finally {
      sendInFlight = false;
    }
  };

  const sendFailed = (type: string) =>
    ApplicationFailure.create({
      type: OTP_SEND_FAILED,
      message: `the code could not be sent (${type})`,
      nonRetryable: true,
      details: [type],
    });

  let firstSend: Promise<string | null> | undefined;

  setHandler(otpStateQuery, state);

  setHandler(
    sendUpdate,
    async () => {
      await condition(() => firstSend !== undefined);
      // The update that came with the start (or raced it) is answered by the first send.
      if (sends === 0) {
        const failed = await firstSend!;
        if (failed) throw sendFailed(failed);
        return sendAnswer('sent');
      }
      // A call that arrives while a resend is in flight is answered by that resend, not by a new one.
      const joined = sendInFlight ? sends : undefined;
      return lock.run(async () => {
        if (joined !== undefined && sends > joined) return sendAnswer('sent');
        // State may have moved while this waited for the lock: answer it rather than send.
        if (status === 'locked') return sendAnswer('locked');
        if (finished()) throw reject(OTP_REJECTIONS.finished, 'this OTP session has ended');
        if (sendsRemaining() === 0) return sendAnswer('limit_reached');
        if (Date.now() < lastSentAt + cooldownMs) return sendAnswer('cooldown');
        const failed = await sendCode();
        if (failed) throw sendFailed(failed);
        return sendAnswer('sent');
      });
    },
    {
      validator: () => {
        if (status === 'locked') throw reject(OTP_REJECTIONS.locked, 'too many wrong codes: sending is locked');
        if (finished()) throw reject(OTP_REJECTIONS.finished, 'this OTP session has ended');
        if (status === 'sending' || sendInFlight) return; // joins the send in flight
        if (sendsRemaining() === 0) throw reject(OTP_REJECTIONS.sendLimit, 'no sends left in this session');
        if (Date.now() < lastSentAt + cooldownMs) throw reject(OTP_REJECTIONS.cooldown, 'too soon after the last send');
      },
    },
  );

  setHandler(verifyUpdate, (request) => lock.run(() => verifyCode(request.sealedCode)), {
    validator: (request) => {
      if (!isOtpVerifyUpdate(request)) throw reject(OTP_REJECTIONS.invalidArgument, 'expected { sealedCode }');
      if (sealedCodeLength(request.sealedCode) !== settings.length) {
        throw reject(OTP_REJECTIONS.wrongLength, `codes of this session have ${settings.length} digits`);
      }
      if (status === 'locked') throw reject(OTP_REJECTIONS.locked, 'too many wrong codes');
      if (finished()) throw reject(OTP_REJECTIONS.finished, 'this OTP session has ended');
    },
  });

  /** One verification; the caller holds the lock. */
  const verifyCode = async (sealedCode: string): Promise<OtpVerifyAnswer> => {
    const answer = (s: OtpVerifyAnswer['status']): OtpVerifyAnswer => ({
      status: s,
      attemptsRemaining: attemptsRemaining(),
    });
    if (status === 'verified') return answer('used');
    if (status === 'locked') return answer('locked');
    if (status !== 'pending' || !otpId) return answer('expired');
    if (Date.now() >= expiresAt) {
      status = 'expired';
      return answer('expired');
    }
    let checked: CheckedOtpCode;
    try {
      checked = await verifier.verifyOtpCode({ otpId, sealedCode });
    } catch (error) {
      throw ApplicationFailure.create({
        type: 'OtpVerificationUnavailable',
        message: `the code could not be checked (${failureType(error)}); it was not counted as an attempt`,
        nonRetryable: true,
      });
    }
    switch (checked.status) {
      case 'verified':
        status = 'verified';
        verifiedAt = iso(Date.now());
        return answer('verified');
      case 'invalid':
        failedAttempts += 1;
        if (failedAttempts >= settings.maxAttempts) {
          lockSession();
          return answer('locked');
        }
        return { status: 'invalid', attemptsRemaining: Math.min(attemptsRemaining(), checked.attemptsRemaining) };
      case 'locked':
        // The provider's own per-code limit ran out: the session locks too.
        failedAttempts += 1;
        lockSession();
        return answer('locked');
      case 'expired':
        status = 'expired';
        return answer('expired');
      case 'used':
        // Verified earlier by someone other than this session: never a success here.
        return answer('used');
    }
  };

  firstSend = lock.run(sendCode);
  await firstSend;

  // The current code's lifetime; a resend replaces the code and restarts it.
  while (status === 'pending') {
    const deadline = expiresAt;
    const moved = await condition(
      () => status !== 'pending' || expiresAt !== deadline,
      Math.max(1, deadline - Date.now()),
    );
    if (!moved) {
      // Behind the lock: a verification that began in time is answered before the session expires.
      await lock.run(async () => {
        if (status === 'pending' && Date.now() >= expiresAt) status = 'expired';
      });
    }
  }
  if (status === 'locked') {
    // Refuse codes and new sends (validators answer `locked`) until the lockout ends.
    await sleep(Math.max(1, lockedUntil - Date.now()));
  }

  upsertSearchAttributes([{ key: SA.finalStatus, value: status }]);
  await condition(allHandlersFinished);
  return { status: status as OtpVerificationResult['status'], sends, failedAttempts, verifiedAt, failure };
}

/** The failure type behind an activity failure (e.g. InsufficientBalance), or a generic label. */
function failureType(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure && cause.type) return cause.type;
  return cause instanceof Error ? cause.name : 'UnknownFailure';
}

function definedOnly<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
