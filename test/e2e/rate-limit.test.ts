/** A 429 from the provider: the send activity retries no sooner than Retry-After, and succeeds then. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessagingClient, RateLimitError } from '../../src/client/index.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';

describe('provider rate limit', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack();
    await stack.admin.setRateLimit(stack.accountId!, 3);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('waits out Retry-After instead of failing or hammering the provider', { timeout: 180_000 }, async () => {
    // Use up this minute's budget of the token the worker sends with.
    const probe = new MessagingClient({ baseUrl: stack.sandbox.baseUrl, token: stack.token, maxRetries: 0 });
    let limited: RateLimitError | undefined;
    while (!limited) {
      limited = await probe.balance.get().then(
        () => undefined,
        (error: unknown) => (error instanceof RateLimitError ? error : Promise.reject(error)),
      );
    }
    const limitedAt = Date.now();
    expect(limited.retryAfterMs).toBeGreaterThan(0);

    const started = await stack.msgflow.sendSms({
      recipients: [MAGIC_NUMBERS.delivered],
      sender: 'ACME',
      message: 'patience',
    });
    const result = await started.result();
    expect(result.messages[0]).toMatchObject({ status: 'delivered' });

    // One 429, then success: a retry sooner than Retry-After would have met another 429 (attempt 3+).
    const events = (await stack.temporal.workflow.getHandle(started.workflowId).fetchHistory()).events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'sendSms');
    const sendStarted = events.find(
      (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
    );
    expect(sendStarted?.activityTaskStartedEventAttributes?.attempt).toBe(2);
    expect(sendStarted?.activityTaskStartedEventAttributes?.lastFailure?.applicationFailureInfo?.type).toBe(
      'ProviderRateLimited',
    );

    const [charge] = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms');
    // Retry-After has one-second resolution, hence the second of slack.
    expect(Date.parse(charge!.created_at)).toBeGreaterThanOrEqual(limitedAt + limited.retryAfterMs! - 1000);
  });
});
