/**
 * The ingress signals a campaign as soon as a chunk's messages are recorded in the store, which can be before
 * the campaign has seen that chunk's send answer (the activity is still returning, its worker is slow, or
 * the SDK hands the signal over first within one workflow task). Those outcomes must count. Here the
 * worker's store answers every registration 2 s late, long after the chunk's events were recorded and
 * signalled: without keeping them, the campaign would wait its 6-hour window for outcomes it was told.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CampaignResult } from '../../src/api/campaign-io.js';
import { FINAL_STATUSES } from '../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import type { MessageStore } from '../../src/store/index.js';
import { startTestStack, startTestWorker, type TestWorker } from '../support/stack.js';

const REGISTRATION_DELAY_MS = 2000;

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Whether a completed activity of the history was a chunk send. */
function isChunkSend(events: HistoryEvent[], completed: HistoryEvent): boolean {
  const scheduledId = Number(completed.activityTaskCompletedEventAttributes?.scheduledEventId);
  const scheduled = events.find((e) => Number(e.eventId) === scheduledId);
  return scheduled?.activityTaskScheduledEventAttributes?.activityType?.name === 'sendCampaignChunk';
}

/** The same store, whose registrations answer late (after they committed): a slow worker, in effect. */
function withLateRegistrations(store: MessageStore): MessageStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'register')
        return async (...args: Parameters<MessageStore['register']>) => {
          const known = await target.register(...args);
          await sleep(REGISTRATION_DELAY_MS);
          return known;
        };
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('campaign outcomes signalled before the send answered', () => {
  let stack: RunningStack;
  let worker: TestWorker | undefined;

  beforeAll(async () => {
    stack = await startTestStack({ startWorker: false });
    worker = await startTestWorker(stack, { store: withLateRegistrations(stack.store) });
  });
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
  });

  it('counts every outcome, those signalled before their chunk was known included', { timeout: 120_000 }, async () => {
    const recipients = [
      ...FINAL_STATUSES.map((s) => MAGIC_NUMBERS[s]),
      ...Array.from({ length: 15 }, (_, i) => `23480${String(40_000_000 + i)}`),
    ];
    const run = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'early outcomes',
      audience: { type: 'inline', recipients },
      chunkSize: 10,
    });
    // Bounded: a campaign that dropped the early outcomes would wait for hours.
    const result: CampaignResult | null = await Promise.race([run.result(), sleep(60_000).then(() => null)]);
    expect(result?.counts).toEqual({ delivered: 16, undelivered: 1, failed: 1, rejected: 1, expired: 1 });
    // The outcomes really came first: a signal is in the history before the first chunk's send answered.
    const events = (await stack.temporal.workflow.getHandle(run.workflowId).fetchHistory()).events ?? [];
    const firstSignal = events.find(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'messageOutcomes',
    );
    const firstAnswer = events.find((e) => e.activityTaskCompletedEventAttributes && isChunkSend(events, e));
    expect(Number(firstSignal?.eventId)).toBeLessThan(Number(firstAnswer?.eventId));
  });
});
