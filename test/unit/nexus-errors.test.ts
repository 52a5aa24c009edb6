/** What a Nexus caller sees of the facade's errors: bad input is final, a refusal is typed, an outage retried. */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { HandlerError, OperationError } from 'nexus-rpc';
import { describe, expect, it } from 'vitest';
import { nexusErrorOf } from '../../src/starter/nexus.js';
import { OtpBlockedError, OtpSendFailedError, OtpVerificationUnavailableError } from '../../src/starter/otp.js';
import { KeyReusedError } from '../../src/starter/start-once.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';

describe('nexusErrorOf', () => {
  it('answers bad input with a BAD_REQUEST that is not retried and names the field', () => {
    const error = nexusErrorOf(
      new InvalidWorkflowInputError('Invalid SMS', [{ path: 'recipients.0', message: 'not a phone number' }]),
    );
    expect(error).toBeInstanceOf(HandlerError);
    expect(error).toMatchObject({ type: 'BAD_REQUEST', retryable: false });
    expect((error as Error).message).toBe('Invalid SMS: recipients.0 not a phone number');
  });

  it("fails the operation with the provider's refusal, typed, with its reason", () => {
    const sendFailed = nexusErrorOf(new OtpSendFailedError('InsufficientBalance'));
    expect(sendFailed).toBeInstanceOf(OperationError);
    expect(sendFailed).toMatchObject({ state: 'failed' });
    const cause = (sendFailed as Error).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({
      type: 'OtpSendFailedError',
      nonRetryable: true,
      details: [{ failureType: 'InsufficientBalance' }],
    });

    const blocked = (nexusErrorOf(new OtpBlockedError('deny_list', null)) as Error).cause;
    expect(blocked).toMatchObject({
      type: 'OtpBlockedError',
      details: [{ reason: 'deny_list', retryAfterSeconds: null }],
    });
  });

  it('fails the operation when a key was used with another input, naming the key', () => {
    const error = nexusErrorOf(new KeyReusedError('spring', 'campaign:spring'));
    expect(error).toBeInstanceOf(OperationError);
    expect((error as Error).cause).toMatchObject({
      type: 'KeyReusedError',
      nonRetryable: true,
      details: [{ key: 'spring' }],
    });
  });

  it("fails the operation with a failed sendSms run's own failure", () => {
    const reason = ApplicationFailure.nonRetryable('the account has no balance', 'InsufficientBalance');
    const error = nexusErrorOf(new WorkflowFailedError('Workflow execution failed', reason, 'NON_RETRYABLE_FAILURE'));
    expect(error).toBeInstanceOf(OperationError);
    expect(error).toMatchObject({ state: 'failed', message: 'the account has no balance' });
    expect((error as Error).cause).toBe(reason);
  });

  it('has the server retry when the provider cannot check a code just now', () => {
    const error = nexusErrorOf(new OtpVerificationUnavailableError('provider unavailable'));
    expect(error).toBeInstanceOf(HandlerError);
    expect(error).toMatchObject({ type: 'UNAVAILABLE', retryable: true });
  });

  it('leaves any other error to the SDK (an internal, retried error)', () => {
    const other = new Error('connection reset');
    expect(nexusErrorOf(other)).toBe(other);
  });
});
