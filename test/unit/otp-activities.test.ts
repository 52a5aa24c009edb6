/**
 * The OTP send activity over a real message store (SQLite) with the provider client faked: a retried send
 * counts the guard's decision once, and a session that awaits its text records it with itself as waiter
 * (one that does not, records nothing).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MetricMeter } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtpActivities, type SentOtp } from '../../activities/otp.js';
import { DEFAULT_OTP_GUARD } from '../../src/api/otp-guard.js';
import type { MessagingClient } from '../../src/client/client.js';
import { METRICS } from '../../src/definitions/metric-names.js';
import { type MessageStore, openMessageStore } from '../../src/store/index.js';

/** Counts what is added to each counter, by name. */
function recordingMeter() {
  const added: { name: string; value: number; tags: Record<string, unknown> }[] = [];
  const meter = {
    createCounter: (name: string) => ({
      add: (value: number, tags: Record<string, unknown> = {}) => added.push({ name, value, tags }),
    }),
  } as unknown as MetricMeter;
  return { meter, added };
}

/** A provider that accepts every OTP text, each with a message id of its own. */
function fakeProvider(): MessagingClient {
  let sent = 0;
  return {
    otp: {
      send: async (request: { recipient: string }) => {
        sent += 1;
        return {
          otp_id: `otp_${sent}`,
          channel: 'sms',
          provider_message_id: `msg_${sent}`,
          mobile_number: `+${request.recipient}`,
          status: 'pending',
          expires_at: '2026-11-25T10:10:00.000+00:00',
          cost: 5,
          currency: 'USD',
        };
      },
    },
  } as unknown as MessagingClient;
}

describe('the OTP send activity', () => {
  const dir = mkdtempSync(join(tmpdir(), 'otp-activities-'));
  let store: MessageStore;
  beforeAll(async () => {
    store = await openMessageStore({ file: join(dir, 'store.db') });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const request = (recipient: string) => ({ recipient, length: 6, expires_in: 600 });

  it("counts a retried send's guard decision once", async () => {
    const { meter, added } = recordingMeter();
    const { sendOtpCode } = createOtpActivities(fakeProvider(), store, { guard: DEFAULT_OTP_GUARD });
    const ref = { purpose: 'login', session: 'otp:login:a/run-1' };
    const first = new MockActivityEnvironment({ attempt: 1 }, { metricMeter: meter });
    await first.run(sendOtpCode, request('2348055000001'), 'otp:login:a/run-1/send-1', ref);
    const retry = new MockActivityEnvironment({ attempt: 2 }, { metricMeter: meter });
    await retry.run(sendOtpCode, request('2348055000001'), 'otp:login:a/run-1/send-1', ref);
    const decisions = added.filter((a) => a.name === METRICS.otpGuardDecisions);
    expect(decisions).toEqual([
      { name: METRICS.otpGuardDecisions, value: 1, tags: expect.objectContaining({ verdict: 'sent', reason: 'none' }) },
    ]);
  });

  it('records the text with its session as waiter only when the session awaits it', async () => {
    const { meter } = recordingMeter();
    const { sendOtpCode } = createOtpActivities(fakeProvider(), store, { guard: null });
    const session = (workflowId: string) =>
      new MockActivityEnvironment({ workflowExecution: { workflowId, runId: 'r' } }, { metricMeter: meter });
    const awaiting: SentOtp = await session('otp:login:b').run(
      sendOtpCode,
      request('2348055000002'),
      'otp:login:b/r/send-1',
      {
        purpose: 'login',
        session: 'otp:login:b/r',
        awaitsText: true,
      },
    );
    expect((await store.message(awaiting.providerMessageId))?.waiters.map((w) => w.workflowId)).toEqual([
      'otp:login:b',
    ]);
    const older: SentOtp = await session('otp:login:c').run(
      sendOtpCode,
      request('2348055000003'),
      'otp:login:c/r/send-1',
      {
        purpose: 'login',
        session: 'otp:login:c/r',
      },
    );
    expect(await store.message(older.providerMessageId)).toBeNull();
  });
});
