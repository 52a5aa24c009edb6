/**
 * Interactive traffic first, at the provider's real limit (120 requests/minute): with campaign chunks queued
 * on the provider task queue (the backlog read from the Temporal server), an OTP's provider call and a single
 * send's reach the sandbox before the chunks still queued — their order read from the sandbox's ledger — and
 * no request meets a 429. The OTP call skips the queue (a local activity); the single send goes first by
 * task-queue priority, without which it would wait behind the whole backlog. Both take the request budget's
 * reserve, which the campaign's calls leave them.
 */
import proto from '@temporalio/proto';
import { isValidPhoneNumber } from 'libphonenumber-js/max';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerTaskQueue } from '../../src/definitions/task-queues.js';
import type { RunningStack } from '../../src/stack.js';
import { activityCalls } from '../support/history.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const LIMIT_PER_MINUTE = 120;
const CAMPAIGNS = 2;
const RECIPIENTS_PER_CAMPAIGN = 24;
const QUEUED_AT_LEAST = 20;

describe('interactive sends before the campaign chunks queued for the provider', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    stack = await startTestStack({ ratePerMinute: LIMIT_PER_MINUTE });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Activity tasks waiting on the provider queue, as the server counts them. */
  async function providerBacklog(): Promise<number> {
    const { stats } = await stack.temporal.workflowService.describeTaskQueue({
      namespace: stack.temporal.options.namespace,
      taskQueue: {
        name: providerTaskQueue(stack.taskQueue),
        kind: proto.temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL,
      },
      taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      reportStats: true,
    });
    return Number(stats?.approximateBacklogCount ?? 0);
  }

  it('sends an OTP and a single SMS ahead of the queued chunks, with no 429', { timeout: 180_000 }, async () => {
    const numbers = validNumbers(CAMPAIGNS * RECIPIENTS_PER_CAMPAIGN + 2);
    const smsRecipient = numbers.pop()!;
    const otpRecipient = numbers.pop()!;
    // One recipient per request, as many requests in flight as a campaign allows: the queue fills up.
    const runs = await Promise.all(
      Array.from({ length: CAMPAIGNS }, (_, i) =>
        stack.msgflow.startCampaign({
          sender: 'ACME',
          message: 'Your appointment is tomorrow at 10:00',
          audience: {
            type: 'inline',
            recipients: numbers.slice(i * RECIPIENTS_PER_CAMPAIGN, (i + 1) * RECIPIENTS_PER_CAMPAIGN),
          },
          chunkSize: 1,
          chunksInFlight: 16,
          preflight: false,
          waitWindowMs: 60_000,
        }),
      ),
    );
    let queued = 0;
    await waitFor(
      async () => (queued = await providerBacklog()) >= QUEUED_AT_LEAST,
      `${QUEUED_AT_LEAST} provider requests queued`,
    );
    const chargedBefore = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms').length;

    const [sent, single] = await Promise.all([
      stack.msgflow.sendOtp({ purpose: 'login', recipient: otpRecipient }),
      stack.msgflow.sendSms({ recipients: [smsRecipient], sender: 'ACME', message: 'Your order has shipped' }),
    ]);
    expect(sent.status).toBe('sent');
    for (const run of [...runs, single]) await run.result();

    // The sandbox's record of every charge, in the order its requests were taken.
    const charges = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms' || e.kind === 'otp');
    const campaignCharges = charges.filter((e) => e.kind === 'sms' && e.recipient !== `+${smsRecipient}`);
    expect(campaignCharges).toHaveLength(CAMPAIGNS * RECIPIENTS_PER_CAMPAIGN);
    for (const interactive of [
      charges.findIndex((e) => e.kind === 'otp'),
      charges.findIndex((e) => e.recipient === `+${smsRecipient}`),
    ]) {
      const chunksBefore = charges.slice(chargedBefore, interactive).filter((e) => campaignCharges.includes(e));
      const chunksAfter = charges.slice(interactive + 1).filter((e) => campaignCharges.includes(e));
      // Taken at the next free request slot: at most the requests already handed to the worker before the
      // call reached the server go first, never the backlog behind them (in FIFO order, all of it would).
      expect(chunksAfter.length).toBeGreaterThanOrEqual(queued - 4);
      expect(chunksBefore.length).toBeLessThanOrEqual(4);
    }

    // No 429: a provider call the provider refused would have been retried, so every one ran once.
    const workflowIds = [...runs.map((r) => r.workflowId), sent.workflowId, single.workflowId];
    for (const workflowId of workflowIds) {
      const calls = activityCalls((await stack.temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? []);
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((call) => call.attempt === 1)).toBe(true);
    }
  });
});

/** Distinct valid Nigerian mobile numbers. */
function validNumbers(count: number): string[] {
  const numbers: string[] = [];
  for (let n = 0; numbers.length < count; n++) {
    const candidate = `2348032${String(n).padStart(6, '0')}`;
    if (isValidPhoneNumber(`+${candidate}`)) numbers.push(candidate);
  }
  return numbers;
}
