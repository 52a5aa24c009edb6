/**
 * Concurrent verifications inside one session. The provider queue is throttled here (the server hands out
 * one provider call every few seconds), so the first verification's provider call waits while the others
 * arrive: several are accepted by the workflow at once, and its lock still lets only one succeed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { activityCalls } from '../support/history.js';
import { startTestStack } from '../support/stack.js';

describe('concurrent OTP verifications', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack({ ratePerMinute: 20, sandbox: { otpPerIpPerMinute: 10_000 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('accepts several at once and lets exactly one succeed; the others answer used', { timeout: 120_000 }, async () => {
    const recipient = '2348012345695';
    const sent = await stack.msgflow.sendOtp({ purpose: 'login', recipient });
    const code = (await stack.admin.inbox(recipient))[0]!.text.match(/\d{6}/)![0];

    const answers = await Promise.all(
      Array.from({ length: 5 }, () => stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })),
    );
    expect(answers.filter((a) => a.status === 'verified')).toHaveLength(1);
    expect(answers.filter((a) => a.status !== 'verified').map((a) => a.status)).toEqual([
      'used',
      'used',
      'used',
      'used',
    ]);

    const events = (await stack.temporal.workflow.getHandle(sent.workflowId).fetchHistory()).events ?? [];
    const acceptedVerifies = events.filter(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'verify',
    );
    expect(acceptedVerifies.length).toBeGreaterThanOrEqual(2);
    // Only the first reached the provider: the lock answered the rest from the session's state.
    expect(activityCalls(events, 'verifyOtpCode')).toHaveLength(1);
  });
});
