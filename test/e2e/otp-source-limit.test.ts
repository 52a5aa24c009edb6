/**
 * The provider's per-source-address OTP limit, at the sandbox's own value: every OTP leaves from the worker's
 * address, so a burst of logins meets it. The send past the limit is answered at once with the provider's
 * Retry-After (OtpRateLimitedError) instead of holding the login until the window passes; nothing is charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/sandbox/options.js';
import type { RunningStack } from '../../src/stack.js';
import { OtpRateLimitedError, otpWorkflowId } from '../../src/starter/otp.js';
import { activityCalls } from '../support/history.js';
import { startTestStack } from '../support/stack.js';

const recipientOf = (n: number) => `2348031${String(n).padStart(6, '0')}`;

describe('OTP sends over the per-source-address limit', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    // The sandbox's default per-IP OTP limit; the token's own limit is far above it.
    stack = await startTestStack({ ratePerMinute: 60_000 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('answers the send past the limit with OtpRateLimitedError and its Retry-After, charging nothing', async () => {
    const limit = DEFAULTS.otpPerIpPerMinute;
    for (let n = 0; n < limit; n++) {
      expect((await stack.msgflow.sendOtp({ purpose: 'login', recipient: recipientOf(n) })).status).toBe('sent');
    }
    const refused = recipientOf(limit);
    const error = await stack.msgflow.sendOtp({ purpose: 'login', recipient: refused }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(OtpRateLimitedError);
    const { retryAfterSeconds, message } = error as OtpRateLimitedError;
    expect(retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(message).toContain(`try again in ${retryAfterSeconds} s`);

    // The session ended at its first attempt: the provider was asked once, the refusal was not retried.
    const handle = stack.temporal.workflow.getHandle(otpWorkflowId(stack.otpKeys.hashKey, 'login', refused));
    expect(await handle.result()).toMatchObject({ status: 'failed', sends: 0, failure: 'OtpSourceRateLimited' });
    const sends = activityCalls((await handle.fetchHistory()).events!, 'sendOtpCode');
    expect(sends.map((call) => call.attempt)).toEqual([1]);
    const ledger = await stack.admin.ledger(stack.accountId!);
    expect(ledger.filter((e) => e.kind === 'otp')).toHaveLength(limit);
    expect(ledger.some((e) => e.recipient === `+${refused}`)).toBe(false);
  });
});
