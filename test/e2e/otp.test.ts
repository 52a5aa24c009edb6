/**
 * OTP sessions end to end: the real sandbox over HTTP (codes read from its inbox), a real worker and the
 * test run's Temporal dev server, driven through the Msgflow facade.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OtpSendAnswer } from '../../src/api/otp-io.js';
import type { RunningStack } from '../../src/stack.js';
import { OtpSendFailedError } from '../../src/starter/otp.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';
import { sealString } from '../../src/crypto/keyring.js';
import { otpWorkflowId } from '../../src/starter/otp.js';
import { OTP_REJECTIONS, verifyUpdate } from '../../src/definitions/otp.js';
import { latestOtpCode, wrongOtpCode } from '../support/otp-inbox.js';
import { startTestStack } from '../support/stack.js';

/** A distinct valid recipient per test, so sessions never meet. */
let nextRecipient = 10;
const newRecipient = () => `23480123456${String(nextRecipient++).padStart(2, '0')}`;

describe('OTP send-then-verify', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    // Every request comes from 127.0.0.1: lift the provider's per-IP OTP limit.
    stack = await startTestStack({ sandbox: { otpPerIpPerMinute: 10_000 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const latestCode = (recipient: string) => latestOtpCode(stack.admin, recipient);
  const wrong = wrongOtpCode;

  it('verifies a code once and only once, charging one send', async () => {
    const recipient = newRecipient();
    const sent = await stack.msgflow.sendOtp({ purpose: 'login', recipient });
    expect(sent).toMatchObject({ status: 'sent', sends: 1, sendsRemaining: 2 });
    expect(sent.workflowId).toBe(otpWorkflowId(stack.otpKeys.hashKey, 'login', recipient));
    const code = await latestCode(recipient);

    expect(await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })).toEqual({
      status: 'verified',
      attemptsRemaining: 5,
    });
    // The same code again — the session has ended — is never a second success.
    expect((await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })).status).toBe('used');
    const result = await stack.temporal.workflow.getHandle(sent.workflowId).result();
    expect(result).toMatchObject({ status: 'verified', sends: 1, failedAttempts: 0, failure: null });
    expect((await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })).status).toBe('used');

    const charges = (await stack.admin.ledger(stack.accountId!)).filter(
      (e) => e.kind === 'otp' && e.recipient === `+${recipient}`,
    );
    expect(charges).toHaveLength(1);
  });

  it('counts wrong codes down to locked, then refuses even the right code and new sends until the lockout ends', async () => {
    const recipient = newRecipient();
    const purpose = 'payment';
    await stack.msgflow.sendOtp({ purpose, recipient, maxAttempts: 3, lockoutSeconds: 2 });
    const code = await latestCode(recipient);

    expect(await stack.msgflow.verifyOtp({ purpose, recipient, code: wrong(code) })).toEqual({
      status: 'invalid',
      attemptsRemaining: 2,
    });
    expect(await stack.msgflow.verifyOtp({ purpose, recipient, code: wrong(code) })).toEqual({
      status: 'invalid',
      attemptsRemaining: 1,
    });
    expect(await stack.msgflow.verifyOtp({ purpose, recipient, code: wrong(code) })).toEqual({
      status: 'locked',
      attemptsRemaining: 0,
    });
    expect(await stack.msgflow.verifyOtp({ purpose, recipient, code })).toEqual({
      status: 'locked',
      attemptsRemaining: 0,
    });
    const refused = await stack.msgflow.sendOtp({ purpose, recipient });
    expect(refused.status).toBe('locked');
    expect(refused.lockedUntil).not.toBeNull();

    // After the lockout the session has ended as locked; its answer stays `locked`, and a new send starts afresh.
    const result = await stack.temporal.workflow.getHandle(refused.workflowId).result();
    expect(result).toMatchObject({ status: 'locked', failedAttempts: 3 });
    expect((await stack.msgflow.verifyOtp({ purpose, recipient, code })).status).toBe('locked');
    const fresh = await stack.msgflow.sendOtp({ purpose, recipient });
    expect(fresh).toMatchObject({ status: 'sent', sends: 1 });
    expect((await stack.msgflow.verifyOtp({ purpose, recipient, code: await latestCode(recipient) })).status).toBe(
      'verified',
    );
  });

  it('expires a code when its lifetime passes, and answers expired afterwards', async () => {
    const recipient = newRecipient();
    const sent = await stack.msgflow.sendOtp({ purpose: 'login', recipient, ttlSeconds: 1 });
    const code = await latestCode(recipient);
    const result = await stack.temporal.workflow.getHandle(sent.workflowId).result();
    expect(result).toMatchObject({ status: 'expired', sends: 1 });
    // The provider would still accept this code (its lifetime is longer): the session's timer decides.
    expect(await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })).toEqual({
      status: 'expired',
      attemptsRemaining: 0,
    });
  });

  it('answers expired when the pair has no session at all', async () => {
    expect(await stack.msgflow.verifyOtp({ purpose: 'never-sent', recipient: newRecipient(), code: '123456' })).toEqual(
      {
        status: 'expired',
        attemptsRemaining: 0,
      },
    );
  });

  it('resends only after the cooldown and up to the send limit; only the latest code verifies', async () => {
    const recipient = newRecipient();
    const purpose = 'signup';
    const options = { purpose, recipient, resendCooldownSeconds: 1, maxSends: 2 };
    const first = await stack.msgflow.sendOtp(options);
    expect(first).toMatchObject({ status: 'sent', sends: 1, sendsRemaining: 1 });
    const firstCode = await latestCode(recipient);

    const tooSoon = await stack.msgflow.sendOtp(options);
    expect(tooSoon).toMatchObject({ status: 'cooldown', sends: 1, sendsRemaining: 1 });
    expect(tooSoon.resendAvailableAt).toBe(first.resendAvailableAt);

    const second = await sendWhenAllowed(() => stack.msgflow.sendOtp(options));
    expect(second).toMatchObject({ status: 'sent', sends: 2, sendsRemaining: 0 });
    expect((await stack.admin.inbox(recipient)).filter((m) => m.kind === 'otp')).toHaveLength(2);
    const secondCode = await latestCode(recipient);

    expect((await stack.msgflow.sendOtp(options)).status).toBe('limit_reached');
    if (secondCode !== firstCode) {
      expect((await stack.msgflow.verifyOtp({ purpose, recipient, code: firstCode })).status).toBe('invalid');
    }
    expect((await stack.msgflow.verifyOtp({ purpose, recipient, code: secondCode })).status).toBe('verified');
  });

  it('lets only one of several concurrent verifications of the right code succeed', async () => {
    const recipient = newRecipient();
    await stack.msgflow.sendOtp({ purpose: 'login', recipient });
    const code = await latestCode(recipient);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 'verified')).toHaveLength(1);
    expect(statuses.filter((s) => s !== 'verified').every((s) => s === 'used')).toBe(true);
  });

  it('joins concurrent first sends into one code', async () => {
    const recipient = newRecipient();
    const answers = await Promise.all([1, 2, 3].map(() => stack.msgflow.sendOtp({ purpose: 'login', recipient })));
    // Whichever calls arrive while the first send is in flight share it; any later one is within the cooldown.
    expect(answers.map((a) => a.status).every((s) => s === 'sent' || s === 'cooldown')).toBe(true);
    expect(answers.every((a) => a.sends === 1)).toBe(true);
    expect((await stack.admin.inbox(recipient)).filter((m) => m.kind === 'otp')).toHaveLength(1);
  });

  it('refuses a code of the wrong length without counting it as an attempt', async () => {
    const recipient = newRecipient();
    await stack.msgflow.sendOtp({ purpose: 'login', recipient, length: 6 });
    expect(await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code: '1234' })).toEqual({
      status: 'invalid',
      attemptsRemaining: 5,
    });
    expect((await stack.msgflow.otpState({ purpose: 'login', recipient }))?.attemptsRemaining).toBe(5);
    expect(
      (await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code: await latestCode(recipient) })).status,
    ).toBe('verified');
  });

  it("refuses malformed verify updates in the workflow's validator, before anything is recorded", async () => {
    const recipient = newRecipient();
    const sent = await stack.msgflow.sendOtp({ purpose: 'login', recipient });
    const handle = stack.temporal.workflow.getHandle(sent.workflowId);
    const rejectionType = (args: unknown) =>
      handle.executeUpdate(verifyUpdate, { args: [args as { sealedCode: string }] }).then(
        () => 'accepted',
        (error: unknown) =>
          error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure
            ? error.cause.type
            : String(error),
      );
    // Straight to the workflow, as a service in another language might: a plain code, nothing, a sealed 3-digit code.
    expect(await rejectionType({ sealedCode: '123456' })).toBe(OTP_REJECTIONS.invalidArgument);
    expect(await rejectionType({})).toBe(OTP_REJECTIONS.invalidArgument);
    expect(await rejectionType({ sealedCode: sealString(stack.otpKeys.sealing, '123') })).toBe(
      OTP_REJECTIONS.wrongLength,
    );

    const events = (await handle.fetchHistory()).events ?? [];
    const accepted = events
      .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name)
      .filter(Boolean);
    expect(accepted).toEqual(['send']); // the start's own send; none of the refused verifications
    expect((await stack.msgflow.otpState({ purpose: 'login', recipient }))?.attemptsRemaining).toBe(5);
  });

  it('rejects malformed input before anything reaches Temporal', async () => {
    const recipient = newRecipient();
    await expect(stack.msgflow.sendOtp({ purpose: 'Log In', recipient })).rejects.toThrow(InvalidWorkflowInputError);
    await expect(stack.msgflow.sendOtp({ purpose: 'login', recipient: '+12' })).rejects.toThrow(/recipient/);
    await expect(stack.msgflow.sendOtp({ purpose: 'login', recipient, maxAttempts: 0 })).rejects.toThrow(/maxAttempts/);
    await expect(stack.msgflow.verifyOtp({ purpose: 'login', recipient, code: '12ab56' })).rejects.toThrow(/code/);
    await expect(stack.msgflow.verifyOtp({ purpose: 'login', recipient, code: '123' })).rejects.toThrow(
      InvalidWorkflowInputError,
    );
    expect(await stack.msgflow.otpState({ purpose: 'login', recipient })).toBeNull();
  });

  it('reports a send the provider refuses as OtpSendFailedError, and the session ends as failed', async () => {
    const recipient = newRecipient();
    const error = await stack.msgflow
      .sendOtp({ purpose: 'login', recipient, sender: 'NOTAPPROVED' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OtpSendFailedError);
    expect((error as OtpSendFailedError).failureType).toBe('ProviderValidationFailed');
    const handle = stack.temporal.workflow.getHandle(otpWorkflowId(stack.otpKeys.hashKey, 'login', recipient));
    expect(await handle.result()).toMatchObject({ status: 'failed', sends: 0, failure: 'ProviderValidationFailed' });
    expect((await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code: '123456' })).status).toBe('expired');
  });
});

/** Repeats a send until the session's cooldown lets it through (not a timing assertion: it waits for a state). */
async function sendWhenAllowed(send: () => Promise<OtpSendAnswer>): Promise<OtpSendAnswer> {
  for (let i = 0; i < 100; i++) {
    const answer = await send();
    if (answer.status !== 'cooldown') return answer;
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(50, Date.parse(answer.resendAvailableAt!) - Date.now())),
    );
  }
  throw new Error('the cooldown never ended');
}
