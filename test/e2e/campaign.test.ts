/**
 * smsCampaign end to end on the real sandbox, ingress, worker and Temporal dev server: every state counted
 * against the sandbox's records, invalid and duplicate recipients reported, idempotent start by key,
 * pause/resume and cancel mid-run (checked in the workflow history), the send window, pre-flight refusals.
 */
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_STATUSES } from '../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';
import type { CampaignRun } from '../../src/starter/campaigns.js';
import { KeyReusedError } from '../../src/starter/start-once.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Distinct valid numbers that the sandbox delivers. */
const numbers = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => `23480${String(10_000_000 + from + i)}`);

/** Messages per status in the sandbox's own records. */
async function sandboxCounts(stack: RunningStack): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for await (const m of stack.messaging.messages.list({ perPage: 200 })) counts[m.status] = (counts[m.status] ?? 0) + 1;
  return counts;
}

async function smsCharges(stack: RunningStack) {
  return (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms');
}

async function history(stack: RunningStack, run: CampaignRun): Promise<HistoryEvent[]> {
  return (await stack.temporal.workflow.getHandle(run.workflowId).fetchHistory()).events ?? [];
}

const isChunkSend = (e: HistoryEvent) =>
  e.activityTaskScheduledEventAttributes?.activityType?.name === 'sendCampaignChunk';
/** The most chunk sends scheduled and not yet closed at any point of a history. */
function maxChunkSendsInFlight(events: HistoryEvent[]): number {
  const open = new Set<string>();
  let max = 0;
  for (const e of events) {
    if (isChunkSend(e)) open.add(String(e.eventId));
    const closed =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (closed) open.delete(String(closed.scheduledEventId));
    max = Math.max(max, open.size);
  }
  return max;
}
const updateAccepted = (events: HistoryEvent[], name: string) =>
  events.findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === name);

describe('smsCampaign', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    // Each send is held 150 ms by the provider, so a campaign of one-recipient chunks runs long enough to steer.
    stack = await startTestStack({ initialBalance: 100_000, sandbox: { sendLatencyMs: 150 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it(
    'sends in chunks, reports every state, invalid and duplicate recipients, and agrees with the sandbox',
    { timeout: 120_000 },
    async () => {
      const before = await smsCharges(stack);
      const recipients = [
        ...FINAL_STATUSES.map((s) => MAGIC_NUMBERS[s]),
        MAGIC_NUMBERS.neverFinal,
        '+1 (202) 555-0100', // the delivered number again, written differently
        'call me',
        ...numbers(3),
        '12',
      ];
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'Your payment is due on Friday',
        audience: { type: 'inline', recipients },
        chunkSize: 3,
        waitWindowMs: 3000,
      });
      expect(run.workflowId).toMatch(/^campaign:/);
      const result = await run.result();

      expect(result).toMatchObject({ cancelled: false, sent: 9, chunks: 3, duplicates: 1 });
      expect(result.counts).toEqual({ delivered: 4, undelivered: 1, failed: 1, rejected: 1, expired: 1, sent: 1 });
      expect(result.invalid).toEqual({
        count: 2,
        recipients: [
          { index: 7, value: '[redacted, 7 chars]', reason: 'unknown number format' },
          { index: 11, value: '12', reason: expect.stringContaining('unknown number format') },
        ],
      });
      expect(result.notFinal.count).toBe(1);
      const [stuck] = result.notFinal.ids;
      expect((await stack.messaging.messages.get(stuck!)).mobile_number).toBe(`+${MAGIC_NUMBERS.neverFinal}`);

      // The provider's records: the same states, each recipient charged once, and the cost we reported.
      expect(await sandboxCounts(stack)).toEqual(result.counts);
      const charges = (await smsCharges(stack)).slice(before.length);
      expect(charges).toHaveLength(9);
      expect(new Set(charges.map((c) => c.recipient)).size).toBe(9);
      expect(charges.reduce((sum, c) => sum + c.amount, 0)).toBe(result.cost);
      expect(result.estimate).toMatchObject({ recipients: 9, segments: 1, cost: result.cost });

      expect(await run.progress()).toMatchObject({ phase: 'completed', sent: 9, queued: 0, counts: result.counts });
      const description = await stack.temporal.workflow.getHandle(run.workflowId).describe();
      expect(description.typedSearchAttributes.getAll()).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ value: 'campaign' }),
          expect.objectContaining({ value: 'ACME' }),
        ]),
      );
    },
  );

  it(
    'starts once per key: the same input gets the same campaign and result, another input is refused',
    { timeout: 60_000 },
    async () => {
      const key = `once-${Date.now()}`;
      const input = {
        sender: 'ACME',
        message: 'once',
        audience: { type: 'inline' as const, recipients: numbers(2, 100) },
      };
      const other = { ...input, message: 'a different text' };
      const first = await stack.msgflow.startCampaign(input, { key });
      const whileRunning = await stack.msgflow.startCampaign(input, { key });
      await expect(stack.msgflow.startCampaign(other, { key })).rejects.toThrow(KeyReusedError);
      const a = await first.result();
      const charges = await smsCharges(stack);
      const afterDone = await stack.msgflow.startCampaign(input, { key });
      const refused = stack.msgflow.startCampaign(other, { key });

      await expect(refused).rejects.toThrow(`key "${key}" was already used with another input`);
      expect(whileRunning.workflowId).toBe(first.workflowId);
      expect(afterDone.workflowId).toBe(first.workflowId);
      expect(await afterDone.result()).toEqual(a);
      expect(await whileRunning.result()).toEqual(a);
      expect(await smsCharges(stack)).toHaveLength(charges.length);
    },
  );

  it(
    'keeps its key once across continue-as-new: another input is refused, the same one gets the result',
    { timeout: 120_000 },
    async () => {
      const key = `once-continued-${Date.now()}`;
      const input = {
        sender: 'ACME',
        message: 'once across runs',
        audience: { type: 'inline' as const, recipients: numbers(60, 700) },
        chunkSize: 1,
        maxEventsPerRun: 200, // the campaign continues as new on the way
      };
      const result = await (await stack.msgflow.startCampaign(input, { key })).result();
      expect(result.runs).toBeGreaterThan(1);
      const charges = await smsCharges(stack);

      await expect(stack.msgflow.startCampaign({ ...input, message: 'another text' }, { key })).rejects.toThrow(
        KeyReusedError,
      );
      expect(await (await stack.msgflow.startCampaign(input, { key })).result()).toEqual(result);
      expect(await smsCharges(stack)).toHaveLength(charges.length);
    },
  );

  it('keeps up to chunksInFlight sends in flight, never more, each charged once', { timeout: 120_000 }, async () => {
    const before = await smsCharges(stack);
    const recipients = numbers(12, 600);
    const run = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'in flight',
      audience: { type: 'inline', recipients },
      chunkSize: 1,
      chunksInFlight: 3,
    });
    expect(await run.result()).toMatchObject({
      sent: 12,
      chunks: 12,
      counts: expect.objectContaining({ delivered: 12 }),
    });
    expect(await smsCharges(stack)).toHaveLength(before.length + 12);
    expect(maxChunkSendsInFlight(await history(stack, run))).toBe(3);
  });

  it('pauses between chunks and resumes to an exact finish', { timeout: 120_000 }, async () => {
    const recipients = numbers(24, 200);
    const run = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'pause me',
      audience: { type: 'inline', recipients },
      chunkSize: 1,
    });
    await waitFor(async () => (await run.progress()).sent >= 3, 'a few chunks');

    const paused = await run.pause('checking the text');
    expect(paused).toMatchObject({ phase: 'paused', paused: true, pausedReason: 'checking the text' });
    // Long enough for several more 150 ms chunks, had the pause not held.
    await new Promise((r) => setTimeout(r, 1500));
    const held = await run.progress();
    expect(held.sent).toBeLessThan(recipients.length);
    await expect(run.pause()).resolves.toMatchObject({ paused: true });

    expect(await run.resume()).toMatchObject({ paused: false, pausedReason: null });
    const result = await run.result();
    expect(result).toMatchObject({
      sent: recipients.length,
      chunks: recipients.length,
      counts: expect.objectContaining({ delivered: recipients.length }),
    });

    // No chunk was scheduled between the pause and the resume (those in flight finished).
    const events = await history(stack, run);
    const pausedAt = updateAccepted(events, 'pause');
    const resumedAt = updateAccepted(events, 'resume');
    expect(pausedAt).toBeGreaterThan(0);
    expect(events.slice(pausedAt, resumedAt).filter(isChunkSend)).toEqual([]);
    await expect(run.pause()).rejects.toThrow();
  });

  it('cancel stops further chunks and reports what was already sent', { timeout: 120_000 }, async () => {
    const before = await smsCharges(stack);
    const recipients = numbers(40, 300);
    const run = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'cancel me',
      audience: { type: 'inline', recipients },
      chunkSize: 2,
    });
    await waitFor(async () => (await run.progress()).sent >= 4, 'a few chunks');
    await run.cancel();
    const result = await run.result();

    expect(result.cancelled).toBe(true);
    expect(result.sent).toBeGreaterThanOrEqual(4);
    expect(result.sent).toBeLessThan(recipients.length);
    expect(result.counts.delivered).toBe(result.sent);
    expect((await smsCharges(stack)).slice(before.length)).toHaveLength(result.sent);
    const events = await history(stack, run);
    expect(events.slice(updateAccepted(events, 'cancel')).filter(isChunkSend)).toEqual([]);
    expect(await run.progress()).toMatchObject({ phase: 'cancelled' });
  });

  it('sends only inside its window and sleeps outside it', { timeout: 120_000 }, async () => {
    const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);
    const opensAt = Math.ceil((Date.now() + 4000) / 1000) * 1000;
    const closesAt = opensAt + 3000;
    // More one-recipient chunks, one at a time, than a 3-second window can take.
    const recipients = numbers(400, 400);
    const run = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'window',
      audience: { type: 'inline', recipients },
      chunkSize: 1,
      chunksInFlight: 1,
      sendWindow: { start: clock(opensAt), end: clock(closesAt), timeZone: 'UTC' },
    });
    const waiting = await waitFor(async () => {
      const p = await run.progress();
      return p.phase === 'outside-window' && p;
    }, 'the wait for the window');
    expect(waiting.sent).toBe(0);
    expect(Date.parse(waiting.windowOpensAt!)).toBe(opensAt);

    // After the window: some sent, the rest waits for tomorrow's window.
    const after = await waitFor(
      async () => {
        const p = await run.progress();
        return p.phase === 'outside-window' && p.sent > 0 && p;
      },
      'the window to close',
      { timeoutMs: 30_000 },
    );
    expect(after.sent).toBeLessThan(recipients.length);
    expect(Date.parse(after.windowOpensAt!)).toBe(opensAt + 24 * 60 * 60 * 1000);

    await run.cancel();
    const result = await run.result();
    expect(result).toMatchObject({ cancelled: true });
    expect(result.sent).toBeLessThan(recipients.length);

    // Every chunk sent (sends in flight when the window closed still complete) was decided inside the
    // window: the workflow's clock then is the start of the workflow task that scheduled it. A send scheduled
    // just before the window closed may be refused when its request is made, after the close: not sent.
    const events = await history(stack, run);
    const scheduled = events.filter(isChunkSend);
    const completed = scheduled.filter((e) =>
      events.some((c) => Number(c.activityTaskCompletedEventAttributes?.scheduledEventId) === Number(e.eventId)),
    );
    expect(completed).toHaveLength(result.sent);
    const sends = scheduled.map((e) => {
      const taskStarted = events.find(
        (t) => Number(t.eventId) === Number(e.activityTaskScheduledEventAttributes!.workflowTaskCompletedEventId) - 1,
      )!;
      return Number(taskStarted.eventTime!.seconds) * 1000 + Math.floor((taskStarted.eventTime!.nanos ?? 0) / 1e6);
    });
    expect(Math.min(...sends)).toBeGreaterThanOrEqual(opensAt);
    expect(Math.max(...sends)).toBeLessThan(closesAt);
  });

  it(
    'fails early, sending nothing, when the estimate is over maxCost, the balance or the spend cap; may start again',
    { timeout: 60_000 },
    async () => {
      const before = await smsCharges(stack);
      const long = 'x'.repeat(1530); // ten segments per recipient
      const tooCostly = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: long,
        audience: { type: 'inline', recipients: numbers(5000, 1000) },
      });
      await expect(tooCostly.result()).rejects.toMatchObject({
        cause: {
          type: 'CampaignPreflightFailed',
          message: expect.stringMatching(/^insufficient balance: the campaign needs about 150000 USD/),
        },
      });

      const overMaxCost = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'hi',
        audience: { type: 'inline', recipients: numbers(5, 400) },
        maxCost: 14, // five recipients at 3 a segment cost 15
      });
      await expect(overMaxCost.result()).rejects.toMatchObject({
        cause: {
          type: 'CampaignPreflightFailed',
          message:
            'over maxCost: the campaign needs about 15 USD minor units (5 recipients × 1 segment(s) × 3), its maxCost is 14',
        },
      });

      const key = `capped-${Date.now()}`;
      const capped = {
        sender: 'ACME',
        message: 'hi',
        audience: { type: 'inline' as const, recipients: numbers(5, 500) },
      };
      await stack.admin.setSpendCap(stack.accountId!, 10);
      try {
        const refused = await stack.msgflow.startCampaign(capped, { key });
        await expect(refused.result()).rejects.toMatchObject({
          cause: { type: 'CampaignPreflightFailed', message: expect.stringContaining('spend cap') },
        });
      } finally {
        await stack.admin.setSpendCap(stack.accountId!, null);
      }
      expect(await smsCharges(stack)).toHaveLength(before.length);

      // A campaign that failed may be started again with its key: it starts over and sends.
      const again = await stack.msgflow.startCampaign(capped, { key });
      expect(await again.result()).toMatchObject({ sent: 5, counts: expect.objectContaining({ delivered: 5 }) });
      expect(await smsCharges(stack)).toHaveLength(before.length + 5);
    },
  );

  it(
    'pauses with the reason when the provider refuses a later chunk, and resumes with the same key',
    { timeout: 120_000 },
    async () => {
      const before = await smsCharges(stack);
      const recipients = numbers(30, 700);
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'cap',
        audience: { type: 'inline', recipients },
        chunkSize: 3,
      });
      await waitFor(async () => (await run.progress()).sent >= 6, 'a few chunks');
      // The spend cap is reached mid-campaign: the next chunk is refused with 403.
      const { spent_this_month } = await stack.messaging.balance.get();
      await stack.admin.setSpendCap(stack.accountId!, spent_this_month);
      try {
        const paused = await waitFor(async () => {
          const p = await run.progress();
          return p.paused && p;
        }, 'the refusal to pause the campaign');
        expect(paused.pausedReason).toMatch(/^ProviderPermissionDenied: .*spend cap/i);
        expect(paused.sent).toBeLessThan(recipients.length);
      } finally {
        await stack.admin.setSpendCap(stack.accountId!, null);
      }
      await run.resume();
      const result = await run.result();
      expect(result).toMatchObject({
        sent: recipients.length,
        counts: expect.objectContaining({ delivered: recipients.length }),
      });
      const charges = (await smsCharges(stack)).slice(before.length);
      expect(new Set(charges.map((c) => c.recipient)).size).toBe(recipients.length);
      expect(charges).toHaveLength(recipients.length);
    },
  );

  it('fails with the provider’s reason when the first chunk is refused', { timeout: 60_000 }, async () => {
    const run = await stack.msgflow.startCampaign({
      sender: 'NOTAPPROVED',
      message: 'hi',
      audience: { type: 'inline', recipients: numbers(2, 600) },
    });
    await expect(run.result()).rejects.toMatchObject({
      cause: { type: 'ProviderValidationFailed', message: expect.stringContaining('stopped before sending anything') },
    });
  });

  it('refuses invalid input before anything starts', async () => {
    const audience = { type: 'inline' as const, recipients: numbers(1) };
    await expect(stack.msgflow.startCampaign({ sender: '', message: 'x', audience })).rejects.toThrow(
      InvalidWorkflowInputError,
    );
    await expect(
      stack.msgflow.startCampaign({ sender: 'ACME', message: 'x', audience, chunkSize: 5000 }),
    ).rejects.toThrow(/chunkSize/);
    await expect(
      stack.msgflow.startCampaign({ sender: 'ACME', message: 'x', audience }, { key: 'has space' }),
    ).rejects.toThrow(/key/);
  });
});
