/**
 * The outbox under faults, with a real Temporal, store, ingress and relay (test/support/outbox-rig.ts; the
 * full-size figures are `npm run bench -- outbox`):
 * - a workflow whose every signal Temporal refuses, beside single sends: it waits in a lane of its own, shown as
 *   refused, and no single send waits for it (none is told only after one of its tries);
 * - an outage's backlog (single sends and campaigns) drained once Temporal is back: every outcome told, none
 *   lost (each is in its workflow's signals in Temporal's history), the oldest workflows first.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SLOW_LANE_AFTER } from '../../src/ingress/relay.js';
import {
  ageOrderInversions,
  backlogPlan,
  outcomesInHistory,
  type OutboxRig,
  type QuietSend,
  recordOutcomes,
  retriedSince,
  startOutboxRig,
  waiterTimes,
} from '../support/outbox-rig.js';
import { waitFor } from '../support/wait-for.js';
import { printSummary } from './support/summary.js';

const QUIET_SENDS = Number(process.env.MSGFLOW_RELIABILITY_OUTBOX_SENDS ?? 20);
const BACKLOG = {
  outcomes: Number(process.env.MSGFLOW_RELIABILITY_OUTBOX_OUTCOMES ?? 10_000),
  singles: 190,
  campaigns: 10,
};
/** Longer than the test: the refused workflow is not tried again once in its slow lane. */
const SLOW_LANE_MS = 10 * 60_000;
/**
 * The production relay's rounds at a smaller scale, so that this backlog's workflows (200) are more than its
 * rounds hold at once (4 × 25), as 1,000 are at full size (4 × 100): the outage goes round the backlog, as a long
 * one does. Calls and probes give up after 1 s instead of 5 s, so that takes seconds.
 */
const RELAY = { slowLaneMs: SLOW_LANE_MS, workflowsPerRound: 25, rounds: 2, callTimeoutMs: 1000, maxBackoffMs: 1000 };
/** The outage goes on this long after the relay holds the backlog: several probes, each failing. */
const OUTAGE_AFTER_HELD_MS = 5_000;

describe('the outbox under faults', () => {
  let rig: OutboxRig;

  beforeAll(async () => {
    rig = await startOutboxRig(inject('temporal'), RELAY);
  }, 120_000);
  afterAll(async () => {
    await rig?.close();
  });

  it('keeps a workflow whose signals are always refused in a lane of its own, beside single sends', async () => {
    const refusedId = `outbox-refused-${randomUUID().slice(0, 8)}`;
    rig.refuse(refusedId);
    await rig.waiting([{ workflowId: refusedId, messages: [`${refusedId}-m`] }]);
    await recordOutcomes(rig.store, [`${refusedId}-m`]);
    // Tried and refused until its slow lane (a pause of all telling, put back, tries it as often).
    await waitFor(() => rig.refusedTries(refusedId).length >= SLOW_LANE_AFTER, 'the refused workflow tried', {
      timeoutMs: 60_000,
    });
    const sends: QuietSend[] = [];
    for (let i = 0; i < QUIET_SENDS; i++) sends.push(await rig.quietSend('beside-refused'));
    // A single send told only after a try of the refused workflow waited for it (a pause of all telling ends with
    // that workflow's next try).
    const tries = rig.refusedTries(refusedId);
    const waitedForRefused = sends.filter((s) => tries.some((t) => t > s.answeredAt && t <= s.toldAt)).length;
    const refusal = await rig.store.outbox.refusal(refusedId);
    const { refusedWorkflows } = await rig.store.outbox.backlog();
    printSummary('refused workflow beside single sends', {
      sends: QUIET_SENDS,
      told: sends.length,
      waitedForRefused,
      refusedTries: tries.length,
      refusalsInStore: refusal?.refusals ?? 0,
      refusedWorkflows,
    });
    expect(waitedForRefused).toBe(0);
    expect(refusal?.refusals).toBeGreaterThanOrEqual(SLOW_LANE_AFTER);
    expect(refusedWorkflows).toBe(1);
    // It stays untold, never dropped; released here so the backlog case starts from nothing untold.
    expect((await rig.store.message(`${refusedId}-m`))?.waiters[0]?.untoldSince).not.toBeNull();
    await rig.store.release(refusedId);
  });

  it('drains an outage backlog once Temporal is back: every outcome told, oldest workflows first', async () => {
    const plan = backlogPlan(randomUUID().slice(0, 8), BACKLOG);
    await rig.waiting(plan.workflows);
    await rig.proxy.cut();
    let untoldSince: number[];
    try {
      await recordOutcomes(rig.store, plan.outcomes);
      expect((await rig.store.outbox.backlog()).untold).toBe(plan.outcomes.length);
      // The relay found the outage with a round of the backlog, and then holds the whole backlog, probing the
      // server meanwhile (its rounds went back among the others: the order they come back in must not matter).
      await waitFor(
        () => plan.workflows.some((w) => rig.tries(w.workflowId) > 0) && rig.relay.size() >= plan.workflows.length,
        'the relay holding the backlog during the outage',
        { timeoutMs: 90_000, intervalMs: 200 },
      );
      await sleep(OUTAGE_AFTER_HELD_MS);
      untoldSince = await Promise.all(
        plan.workflows.map(async (w) => (await waiterTimes(rig.store, w.workflowId, w.first)).untoldSince!),
      );
    } finally {
      await rig.proxy.restore();
    }
    const restoredAt = Date.now();
    // A single send during the catch-up is told too (first, by design; its time is the benchmark's).
    const quiet = await rig.quietSend('catch-up');
    await waitFor(async () => (await rig.store.outbox.backlog()).untold === 0, 'an empty backlog', {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    let lost = 0;
    for (const w of plan.workflows) {
      const heard = await outcomesInHistory(rig.client, w.workflowId);
      lost += w.messages.filter((m) => !m.endsWith('-pending') && !heard.has(m)).length;
    }
    const toldAt = await Promise.all(
      plan.workflows.map(async (w) => (await waiterTimes(rig.store, w.workflowId, w.first)).toldAt!),
    );
    // Oldest first, round by round: no workflow told by a later round than a younger one, unless its own first
    // round after Temporal's return did not get its signal through (rounds go side by side; it is retried first).
    const ages = plan.workflows.map((w, i) => ({
      untoldSince: untoldSince[i]!,
      toldAt: toldAt[i]!,
      retried: retriedSince(rig, w.workflowId, toldAt[i]!, restoredAt),
    }));
    const order = ageOrderInversions(ages);
    printSummary('outage backlog drained', {
      outcomes: plan.outcomes.length,
      workflows: plan.workflows.length,
      lost,
      agePairs: order.pairs,
      toldOutOfAgeOrder: order.inverted - order.afterRetry,
      outOfOrderAfterRetry: order.afterRetry,
      retried: ages.filter((a) => a.retried).length,
      quietTold: rig.firstToldAt.has(quiet.workflowId) ? 1 : 0,
    });
    expect(lost).toBe(0);
    expect(order.inverted - order.afterRetry).toBe(0);
  });
});
