/** Unwrapping a workflow's failure to its root cause, and the CLI's exit status for each kind. */
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  RetryState,
  TerminatedFailure,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { describeFailure, EXIT_CODES, exitCodeOf } from '../../src/cli/common.js';
import { explainFailure, isRefusal, rootCause } from '../../src/starter/failures.js';

const workflowFailed = (cause: Error) =>
  new WorkflowFailedError('Workflow execution failed', cause, RetryState.NON_RETRYABLE_FAILURE);
const activityFailed = (cause: Error) =>
  new ActivityFailure('Activity task failed', 'sendSms', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);

describe('explainFailure', () => {
  it('names the provider refusal under the workflow and activity wrappers, with its code', () => {
    const refusal = ApplicationFailure.create({
      type: 'ProviderValidationFailed',
      message: 'The sender "NOPE" is not approved for this account',
      nonRetryable: true,
      details: [{ code: 'sender_not_approved', details: [] }],
    });
    const error = workflowFailed(activityFailed(refusal));
    expect(rootCause(error)).toBe(refusal);
    const reason = explainFailure(error)!;
    expect(reason).toEqual({
      status: 'failed',
      kind: 'sender_not_approved',
      type: 'ProviderValidationFailed',
      message: 'The sender "NOPE" is not approved for this account',
      nonRetryable: true,
    });
    expect(describeFailure(reason)).toBe(
      'failed: sender_not_approved — The sender "NOPE" is not approved for this account',
    );
    expect(exitCodeOf(reason)).toBe(EXIT_CODES.refused);
  });

  it("names a workflow's own failure by its type when no provider code is given", () => {
    const reason = explainFailure(
      workflowFailed(
        ApplicationFailure.create({
          type: 'AudienceUnavailable',
          message: 'the campaign stopped before sending anything',
          nonRetryable: true,
        }),
      ),
    )!;
    expect(reason).toMatchObject({ status: 'failed', kind: 'AudienceUnavailable', type: 'AudienceUnavailable' });
    expect(isRefusal(reason)).toBe(true);
  });

  it('tells an untyped or retryable error from a refusal: exit status 1', () => {
    const untyped = explainFailure(workflowFailed(activityFailed(ApplicationFailure.nonRetryable('boom', 'Error'))))!;
    expect(untyped).toMatchObject({ kind: 'Error', message: 'boom', nonRetryable: true });
    expect(exitCodeOf(untyped)).toBe(EXIT_CODES.failed);
    const retryable = explainFailure(
      workflowFailed(activityFailed(ApplicationFailure.retryable('connect ECONNRESET', 'NetworkError'))),
    )!;
    expect(retryable).toMatchObject({ kind: 'NetworkError', nonRetryable: false });
    expect(exitCodeOf(retryable)).toBe(EXIT_CODES.failed);
  });

  it('reports timeouts, cancellations and terminations as stopped: exit status 4', () => {
    const cases = [
      [new TimeoutFailure('Activity task timed out', undefined, TimeoutType.START_TO_CLOSE), 'timed-out', 'Timeout'],
      [new CancelledFailure('Workflow canceled'), 'cancelled', 'Cancelled'],
      [new TerminatedFailure('stuck'), 'terminated', 'Terminated'],
    ] as const;
    for (const [cause, status, type] of cases) {
      const reason = explainFailure(workflowFailed(activityFailed(cause)))!;
      expect(reason).toMatchObject({ status, type, kind: type, message: cause.message });
      expect(exitCodeOf(reason)).toBe(EXIT_CODES.stopped);
    }
  });

  it('keeps the cause of an application failure that wraps another error', () => {
    const inner = ApplicationFailure.create({
      type: 'AudienceSourceRefused',
      message: 'not allowed',
      nonRetryable: true,
    });
    const outer = ApplicationFailure.create({ type: 'Wrapper', message: 'outer', cause: inner });
    expect(explainFailure(workflowFailed(outer))).toMatchObject({
      kind: 'AudienceSourceRefused',
      message: 'not allowed',
    });
  });

  it('leaves errors that are no workflow failure alone', () => {
    expect(explainFailure(new Error('cannot connect'))).toBeUndefined();
    expect(explainFailure(new WorkflowNotFoundError('gone', 'campaign:x', undefined))).toBeUndefined();
    expect(explainFailure('a string')).toBeUndefined();
  });
});
