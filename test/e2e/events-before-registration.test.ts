/**
 * A message's final event can be recorded before its sender registers it (the webhook outran the send
 * activity's write): nobody waits for it yet, so the ingress signals nobody, and only the registration's
 * answer (`alreadyFinal`) tells the workflow. Here the worker's store holds every registration back until the
 * ingress has recorded the final event of each message it names, then writes it: a send activity that dropped
 * what registration returned would leave its workflow waiting out its 6-hour window (and an OTP session
 * without the call its undelivered text should bring).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CampaignResult } from '../../src/api/campaign-io.js';
import type { SendSmsResult } from '../../src/api/workflow-io.js';
import { FINAL_STATUSES } from '../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import type { MessageStore } from '../../src/store/index.js';
import { startTestStack, startTestWorker, type TestWorker } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

/** Long enough for any test here, far below the default wait window a lost outcome would wait out. */
const RESULT_BOUND_MS = 30_000;

/** The same store, whose registrations are written only once every message they name has a final outcome. */
function withRegistrationsAfterEvents(store: MessageStore, registered: string[]): MessageStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'register')
        return async (...args: Parameters<MessageStore['register']>) => {
          const ids = args[1].map((m) => m.providerMessageId);
          await waitFor(
            async () => (await target.outcomes(ids)).length === ids.length,
            'the final events of the messages being registered',
            { intervalMs: 20, timeoutMs: 20_000 },
          );
          registered.push(...ids);
          return target.register(...args);
        };
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The result, or null when it took longer than RESULT_BOUND_MS (an outcome was lost). */
function boundedResult<T>(result: Promise<T>): Promise<T | null> {
  return Promise.race([result, sleep(RESULT_BOUND_MS).then(() => null)]);
}

describe('final events recorded before their messages were registered', () => {
  let stack: RunningStack;
  let worker: TestWorker | undefined;
  const registered: string[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ startWorker: false });
    worker = await startTestWorker(stack, { store: withRegistrationsAfterEvents(stack.store, registered) });
  });
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
  });

  it('a single send reports the webhook states registration handed back', { timeout: 60_000 }, async () => {
    const recipients = [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered];
    const run = await stack.msgflow.sendSms({ recipients, sender: 'ACME', message: 'early events' });
    const result: SendSmsResult | null = await boundedResult(run.result());
    expect(result, 'the send ended without waiting out its window').not.toBeNull();
    expect(result?.messages.map((m) => [m.mobile_number, m.status, m.source])).toEqual([
      [`+${MAGIC_NUMBERS.delivered}`, 'delivered', 'webhook'],
      [`+${MAGIC_NUMBERS.undelivered}`, 'undelivered', 'webhook'],
    ]);
    // The events really came first: the store held them when the registration was written.
    const ids = result!.messages.map((m) => m.provider_message_id);
    expect(registered).toEqual(expect.arrayContaining(ids));
  });

  it('a campaign counts the webhook states registration handed back', { timeout: 60_000 }, async () => {
    const recipients = [
      ...FINAL_STATUSES.map((s) => MAGIC_NUMBERS[s]),
      ...Array.from({ length: 5 }, (_, i) => `23480${String(41_000_000 + i)}`),
    ];
    const run = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'early events',
      audience: { type: 'inline', recipients },
      chunkSize: 4,
    });
    const result: CampaignResult | null = await boundedResult(run.result());
    expect(result, 'the campaign ended without waiting out its window').not.toBeNull();
    expect(result?.counts).toEqual({ delivered: 6, undelivered: 1, failed: 1, rejected: 1, expired: 1 });
    const ids: string[] = [];
    for await (const row of stack.msgflow.reports.rows(run.key)) ids.push(row.providerMessageId);
    expect(ids).toHaveLength(recipients.length);
    expect(registered).toEqual(expect.arrayContaining(ids));
  });

  it(
    'an OTP session calls after an undelivered text whose status registration handed back',
    { timeout: 60_000 },
    async () => {
      const recipient = MAGIC_NUMBERS.undelivered;
      // Only the text's status can bring the call before this timeout: no test waits for it.
      await stack.msgflow.sendOtp({
        purpose: 'early',
        recipient,
        channels: ['sms', 'voice'],
        channelTimeoutSeconds: 3600,
      });
      const call = await waitFor(
        async () => (await stack.admin.inbox(recipient)).find((e) => e.kind === 'voice'),
        'the voice call after the undelivered text',
        { timeoutMs: RESULT_BOUND_MS },
      );
      const text = (await stack.admin.inbox(recipient)).find((e) => e.kind === 'otp')!;
      expect(registered).toContain(text.provider_message_id);
      expect(call.code).toBe(text.code);
    },
  );
});
