/**
 * The outbox on SQLite and a real PostgreSQL server: which outcomes are untold, per-row told-marks, the
 * relays' claims (one at a time, the rate rule, a crashed relay's lease running out) and ended workflows.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ClaimOptions, MessageStore, UntoldQuery } from '../../src/store/index.js';
import { type DialectHarness, DIALECTS, harness } from './dialects.js';

const delivered = (id: string) => ({ providerMessageId: id, status: 'delivered', timestamp: '2026-01-01T00:00:00Z' });
const claimBy = (owner: string, now: number, extra: Partial<ClaimOptions> = {}): ClaimOptions => ({
  owner,
  leaseMs: 10_000,
  minIntervalMs: 500,
  maxOutcomes: 1000,
  now,
  ...extra,
});
const nothing = { told: [], ended: [], refused: [], failed: [] };
const untoldIds = async (store: MessageStore, query: Partial<UntoldQuery> = {}) =>
  (await store.outbox.untold({ limit: 10, ...query })).workflows.map((w) => w.workflowId);
const idsOf = (claimed: Awaited<ReturnType<MessageStore['outbox']['claim']>>) =>
  claimed.outcomes.map((w) => [w.workflowId, w.outcomes.map((o) => o.providerMessageId)]);

describe.each(DIALECTS)('outbox on %s', (dialect) => {
  let h: DialectHarness;
  let store: MessageStore;

  beforeAll(async () => {
    h = await harness(dialect);
  });
  afterAll(() => h?.close());

  /** relay-1 told wf-a these outcomes (at `now`). */
  const toldWfA = (providerMessageIds: string[], now?: number) =>
    store.outbox.finish('relay-1', { ...nothing, told: [{ workflowId: 'wf-a', providerMessageIds }] }, now);

  async function fresh(): Promise<MessageStore> {
    store = await h.open(await h.freshLocation());
    return store;
  }

  it('an outcome recorded for a waiting workflow is untold until a relay marks it told', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }, { providerMessageId: 'm2' }]);
    await store.register('wf-b', [{ providerMessageId: 'm3' }]);
    expect(await store.outbox.backlog()).toEqual({ untold: 0, oldestUntoldAt: null, refusedWorkflows: 0 });
    await store.recordEvents([delivered('m1'), delivered('m2'), delivered('m3')]);
    const backlog = await store.outbox.backlog();
    expect(backlog.untold).toBe(3);
    expect(backlog.oldestUntoldAt).toBeGreaterThan(Date.now() - 60_000);
    expect(await untoldIds(store)).toEqual(['wf-a', 'wf-b']);

    const now = Date.now();
    const claimed = await store.outbox.claim(['wf-a', 'wf-b'], claimBy('relay-1', now));
    expect(idsOf(claimed)).toEqual([
      ['wf-a', ['m1', 'm2']],
      ['wf-b', ['m3']],
    ]);
    expect(claimed.outcomes[0]!.outcomes[0]).toMatchObject({ status: 'delivered', timestamp: '2026-01-01T00:00:00Z' });
    // Only m1 was told (its signal was accepted); m2 stays untold: marks are per row.
    await store.outbox.finish(
      'relay-1',
      { ...nothing, told: [{ workflowId: 'wf-a', providerMessageIds: ['m1'] }], failed: ['wf-b'] },
      now,
    );
    expect(await untoldIds(store)).toEqual(['wf-a', 'wf-b']);
    // A redelivery of a told outcome does not make it untold again.
    await store.recordEvents([delivered('m1')]);
    expect((await store.outbox.backlog()).untold).toBe(2);
  });

  it('one relay at a time: a claimed workflow is held from others until given back or its lease runs out', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }]);
    await store.recordEvents([delivered('m1')]);
    const now = Date.now();
    expect(idsOf(await store.outbox.claim(['wf-a'], claimBy('relay-1', now)))).toEqual([['wf-a', ['m1']]]);
    expect(await store.outbox.claim(['wf-a'], claimBy('relay-2', now + 9_000))).toEqual({
      outcomes: [],
      held: ['wf-a'],
      deferred: [],
    });
    // relay-1 crashed holding the claim: after its lease another relay takes the workflow over.
    expect(idsOf(await store.outbox.claim(['wf-a'], claimBy('relay-2', now + 10_001)))).toEqual([['wf-a', ['m1']]]);
    // relay-1's late finish neither releases relay-2's claim nor is lost: the outcome is told.
    await toldWfA(['m1']);
    expect((await store.outbox.backlog()).untold).toBe(0);
    await store.register('wf-a', [{ providerMessageId: 'm2' }]);
    await store.recordEvents([delivered('m2')]);
    expect((await store.outbox.claim(['wf-a'], claimBy('relay-3', now + 10_002))).held).toEqual(['wf-a']);
  });

  it('the rate rule: a workflow told less than minIntervalMs ago is not claimed yet', async () => {
    await fresh();
    // m3 stays pending throughout: the workflow still waits for something, so no early signal.
    await store.register('wf-a', [
      { providerMessageId: 'm1' },
      { providerMessageId: 'm2' },
      { providerMessageId: 'm3' },
    ]);
    await store.recordEvents([delivered('m1')]);
    const now = Date.now();
    const first = await store.outbox.claim(['wf-a'], claimBy('relay-1', now));
    await toldWfA(['m1'], now);
    expect(idsOf(first)).toEqual([['wf-a', ['m1']]]);
    await store.recordEvents([delivered('m2')]);
    expect(await store.outbox.claim(['wf-a'], claimBy('relay-2', now + 499))).toEqual({
      outcomes: [],
      held: ['wf-a'],
      deferred: [],
    });
    expect(idsOf(await store.outbox.claim(['wf-a'], claimBy('relay-2', now + 500)))).toEqual([['wf-a', ['m2']]]);
  });

  it('a workflow waiting for nothing but its untold outcomes is told early, once', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }, { providerMessageId: 'm2' }]);
    await store.recordEvents([delivered('m1')]);
    const now = Date.now();
    await store.outbox.claim(['wf-a'], claimBy('relay-1', now));
    await toldWfA(['m1'], now);
    // Its last awaited outcome: claimed within the interval.
    const [last] = await store.recordEvents([delivered('m2')]);
    expect(last).toMatchObject({ workflowId: 'wf-a', allFinal: true });
    expect(idsOf(await store.outbox.claim(['wf-a'], claimBy('relay-1', now + 100)))).toEqual([['wf-a', ['m2']]]);
    await toldWfA(['m2'], now + 100);
    // Once: a message registered and settled later waits out the interval again.
    await store.register('wf-a', [{ providerMessageId: 'm3' }]);
    await store.recordEvents([delivered('m3')]);
    expect(await store.outbox.claim(['wf-a'], claimBy('relay-1', now + 200))).toEqual({
      outcomes: [],
      held: ['wf-a'],
      deferred: [],
    });
    expect(idsOf(await store.outbox.claim(['wf-a'], claimBy('relay-1', now + 600)))).toEqual([['wf-a', ['m3']]]);
  });

  it('an early claim finding nothing untold does not use up the early signal', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }, { providerMessageId: 'm2' }]);
    await store.recordEvents([delivered('m1')]);
    const now = Date.now();
    await store.outbox.claim(['wf-a'], claimBy('relay-1', now));
    await toldWfA(['m1'], now);
    await store.release('wf-a', ['m2']);
    // Nothing pending and nothing untold: refused, and the early signal is still there for later.
    expect(await store.outbox.claim(['wf-a'], claimBy('relay-1', now + 100))).toEqual({
      outcomes: [],
      held: ['wf-a'],
      deferred: [],
    });
    await store.register('wf-a', [{ providerMessageId: 'm2' }]);
    await store.recordEvents([delivered('m2')]);
    expect(idsOf(await store.outbox.claim(['wf-a'], claimBy('relay-1', now + 200)))).toEqual([['wf-a', ['m2']]]);
  });

  it('a claim reads at most maxOutcomes, oldest first; a workflow with nothing untold is let go at once', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }, { providerMessageId: 'm2' }]);
    await store.register('wf-b', [{ providerMessageId: 'm3' }]);
    await store.recordEvents([delivered('m2')]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await store.recordEvents([delivered('m1')]);
    const now = Date.now();
    const claimed = await store.outbox.claim(['wf-a', 'wf-b'], claimBy('relay-1', now, { maxOutcomes: 1 }));
    expect(idsOf(claimed)).toEqual([['wf-a', ['m2']]]);
    expect(claimed.held).toEqual([]);
    // wf-b had nothing to tell: its claim was given back, so another relay may claim it when it has.
    await store.recordEvents([delivered('m3')]);
    expect(idsOf(await store.outbox.claim(['wf-b'], claimBy('relay-2', now)))).toEqual([['wf-b', ['m3']]]);
  });

  it('a claim reads at most maxOutcomesInAll, whole workflows in the order asked; the rest deferred, untouched', async () => {
    await fresh();
    // wf-a has 3 untold, wf-b 1, wf-c 2, wf-d none (still pending), wf-e 1.
    await store.register(
      'wf-a',
      ['a1', 'a2', 'a3'].map((providerMessageId) => ({ providerMessageId })),
    );
    await store.register('wf-b', [{ providerMessageId: 'b1' }]);
    await store.register(
      'wf-c',
      ['c1', 'c2', 'c3'].map((providerMessageId) => ({ providerMessageId })),
    );
    await store.register('wf-d', [{ providerMessageId: 'd1' }]);
    await store.register('wf-e', [{ providerMessageId: 'e1' }]);
    await store.recordEvents(['a1', 'a2', 'a3', 'b1', 'c1', 'c2', 'e1'].map(delivered));
    const now = Date.now();
    const order = ['wf-d', 'wf-b', 'wf-a', 'wf-c', 'wf-e'];
    // b (1) and a (3) fit in 5; c (2) does not, so neither c nor e after it is read, though e alone would fit.
    const claimed = await store.outbox.claim(order, claimBy('relay-1', now, { maxOutcomesInAll: 5 }));
    expect(idsOf(claimed)).toEqual([
      ['wf-b', ['b1']],
      ['wf-a', ['a1', 'a2', 'a3']],
    ]);
    expect(claimed.deferred).toEqual([
      { workflowId: 'wf-c', untold: 2 },
      { workflowId: 'wf-e', untold: 1 },
    ]);
    expect(claimed.held).toEqual([]);
    // Deferred claims are let go at once: another relay may take them.
    expect(idsOf(await store.outbox.claim(['wf-c', 'wf-e'], claimBy('relay-2', now)))).toEqual([
      ['wf-c', ['c1', 'c2']],
      ['wf-e', ['e1']],
    ]);
    // The first workflow with anything untold is read whatever its count; maxOutcomes bounds its share.
    await store.outbox.finish('relay-1', { ...nothing, failed: ['wf-a', 'wf-b'] });
    const first = await store.outbox.claim(
      ['wf-a', 'wf-b'],
      claimBy('relay-3', now + 1, { maxOutcomesInAll: 1, maxOutcomes: 2 }),
    );
    expect(idsOf(first)).toEqual([['wf-a', ['a1', 'a2']]]);
    expect(first.deferred).toEqual([{ workflowId: 'wf-b', untold: 1 }]);
  });

  it('a deferred claim keeps the early signal of a workflow waiting for nothing but its untold outcomes', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'a1' }]);
    await store.register('wf-b', [{ providerMessageId: 'b1' }, { providerMessageId: 'b2' }]);
    await store.recordEvents([delivered('b1')]);
    const now = Date.now();
    await store.outbox.claim(['wf-b'], claimBy('relay-1', now));
    await store.outbox.finish(
      'relay-1',
      { ...nothing, told: [{ workflowId: 'wf-b', providerMessageIds: ['b1'] }] },
      now,
    );
    // wf-b's last awaited outcome: it may be told early, once; a claim within the interval defers it first.
    await store.recordEvents([delivered('a1'), delivered('b2')]);
    const deferring = await store.outbox.claim(
      ['wf-a', 'wf-b'],
      claimBy('relay-1', now + 100, { maxOutcomesInAll: 1 }),
    );
    expect(idsOf(deferring)).toEqual([['wf-a', ['a1']]]);
    expect(deferring.deferred).toEqual([{ workflowId: 'wf-b', untold: 1 }]);
    expect(idsOf(await store.outbox.claim(['wf-b'], claimBy('relay-1', now + 200)))).toEqual([['wf-b', ['b2']]]);
  });

  it('an outcome handed back by register is told there; release and an ended workflow clear what is untold', async () => {
    await fresh();
    await store.recordEvents([delivered('m1')]);
    expect(await store.register('wf-a', [{ providerMessageId: 'm1' }])).toHaveLength(1);
    expect((await store.outbox.backlog()).untold).toBe(0);
    // Registered, recorded (untold), then registered again (an activity's retry): handed back, so told.
    await store.register('wf-b', [{ providerMessageId: 'm2' }]);
    await store.recordEvents([delivered('m2')]);
    expect((await store.outbox.backlog()).untold).toBe(1);
    await store.register('wf-b', [{ providerMessageId: 'm2' }]);
    expect((await store.outbox.backlog()).untold).toBe(0);

    await store.register('wf-c', [{ providerMessageId: 'm3' }]);
    await store.register('wf-d', [{ providerMessageId: 'm4' }]);
    await store.recordEvents([delivered('m3'), delivered('m4')]);
    await store.release('wf-c');
    expect(await untoldIds(store)).toEqual(['wf-d']);
    const now = Date.now();
    await store.outbox.claim(['wf-d'], claimBy('relay-1', now));
    await store.outbox.finish('relay-1', { ...nothing, ended: ['wf-d'] }, now);
    expect(await store.outbox.backlog()).toEqual({ untold: 0, oldestUntoldAt: null, refusedWorkflows: 0 });
    expect((await store.message('m4'))?.waiters[0]?.releasedAt).not.toBeNull();
    // Claims that hold nothing any more are forgotten.
    expect(await store.outbox.forgetClaims(now + 1)).toBe(1);
  });

  describe('on a clock the test sets', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['Date'] });
    });
    afterEach(() => {
      vi.useRealTimers();
    });
    /** Records each outcome a millisecond after the one before. */
    const recordInTurn = async (ids: string[]) => {
      for (const id of ids) {
        vi.setSystemTime(Date.now() + 1);
        await store.recordEvents([delivered(id)]);
      }
    };

    it('pages through the untold outcomes oldest first with a cursor, each workflow once per page', async () => {
      await fresh();
      const workflows = ['wf-1', 'wf-2', 'wf-3', 'wf-4', 'wf-5'];
      for (const w of workflows)
        await store.register(w, [{ providerMessageId: `${w}-a` }, { providerMessageId: `${w}-b` }]);
      // Recorded wf-5 … wf-1, then each one's second outcome: the age order is the record order, not the ids'.
      const reversed = [...workflows].reverse();
      await recordInTurn([...reversed.map((w) => `${w}-a`), ...reversed.map((w) => `${w}-b`)]);
      const first = await store.outbox.untold({ limit: 2 });
      expect(first.workflows.map((w) => w.workflowId)).toEqual(['wf-5', 'wf-4']);
      const second = await store.outbox.untold({ limit: 2, after: first.next! });
      expect(second.workflows.map((w) => w.workflowId)).toEqual(['wf-3', 'wf-2']);
      const third = await store.outbox.untold({ limit: 2, after: second.next! });
      // wf-1, then the second outcomes, wf-5's first: a workflow comes again once the cursor reaches them.
      expect(third.workflows.map((w) => w.workflowId)).toEqual(['wf-1', 'wf-5']);
      let page = third;
      const rest: string[] = [];
      while (page.next) {
        page = await store.outbox.untold({ limit: 2, after: page.next });
        rest.push(...page.workflows.map((w) => w.workflowId));
      }
      expect(rest).toEqual(['wf-4', 'wf-3', 'wf-2', 'wf-1']);
    });

    it('reads a bounded number of rows per page, however many one workflow has untold', async () => {
      await fresh();
      await store.register(
        'campaign',
        Array.from({ length: 50 }, (_, i) => ({ providerMessageId: `c${i}` })),
      );
      await store.register('sms', [{ providerMessageId: 's0' }]);
      await recordInTurn([...Array.from({ length: 50 }, (_, i) => `c${i}`), 's0']);
      // Ten rows per workflow asked for: the campaign's 50 outcomes fill five pages before the send behind them.
      const pages: string[][] = [];
      let page = await store.outbox.untold({ limit: 1 });
      pages.push(page.workflows.map((w) => w.workflowId));
      while (page.next) {
        page = await store.outbox.untold({ limit: 1, after: page.next });
        pages.push(page.workflows.map((w) => w.workflowId));
      }
      expect(pages).toEqual([...Array.from({ length: 5 }, () => ['campaign']), ['sms']]);
    });
  });

  it('relays whose clocks are S apart: a lease is taken over, and a workflow told again, at most S early', async () => {
    await fresh();
    const S = 300;
    /** relay-2's clock runs S ahead: what it reads at a true time. */
    const relay2Clock = (trueTime: number) => trueTime + S;
    // m3 stays pending: no early signal, the interval rules.
    await store.register('wf-a', [
      { providerMessageId: 'm1' },
      { providerMessageId: 'm2' },
      { providerMessageId: 'm3' },
    ]);
    await store.recordEvents([delivered('m1')]);
    const t0 = Date.now();
    await store.outbox.claim(['wf-a'], claimBy('relay-1', t0));
    // relay-1's lease of 10 s: relay-2 takes it over no earlier than S before it ends.
    const leaseEnds = t0 + 10_000;
    expect((await store.outbox.claim(['wf-a'], claimBy('relay-2', relay2Clock(leaseEnds - S)))).held).toEqual(['wf-a']);
    expect(idsOf(await store.outbox.claim(['wf-a'], claimBy('relay-2', relay2Clock(leaseEnds - S + 1))))).toEqual([
      ['wf-a', ['m1']],
    ]);
    await store.outbox.finish('relay-2', { ...nothing, failed: ['wf-a'] });
    // relay-1 tells it at t1; relay-2 may tell it again no earlier than S before the 500 ms interval is over.
    const t1 = leaseEnds + 1000;
    await store.outbox.claim(['wf-a'], claimBy('relay-1', t1));
    await toldWfA(['m1'], t1);
    await store.recordEvents([delivered('m2')]);
    expect((await store.outbox.claim(['wf-a'], claimBy('relay-2', relay2Clock(t1 + 500 - S - 1)))).held).toEqual([
      'wf-a',
    ]);
    expect(idsOf(await store.outbox.claim(['wf-a'], claimBy('relay-2', relay2Clock(t1 + 500 - S))))).toEqual([
      ['wf-a', ['m2']],
    ]);
  });

  it('a refused workflow waits out its backoff: not swept, not claimed, counted, and told again after', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }]);
    await store.register('wf-b', [{ providerMessageId: 'm2' }]);
    await store.recordEvents([delivered('m1'), delivered('m2')]);
    const now = Date.now();
    const claimed = await store.outbox.claim(['wf-a', 'wf-b'], claimBy('relay-1', now));
    expect(claimed.outcomes.map((w) => [w.workflowId, w.refusals])).toEqual([
      ['wf-a', 0],
      ['wf-b', 0],
    ]);
    await store.outbox.finish(
      'relay-1',
      { ...nothing, refused: [{ workflowId: 'wf-a', retryAt: now + 60_000, reason: 'too big' }], failed: ['wf-b'] },
      now,
    );
    expect(await store.outbox.refusal('wf-a')).toEqual({ refusals: 1, reason: 'too big', retryAt: now + 60_000 });
    // The message says why its outcome waits.
    expect((await store.message('m1'))?.waiters[0]).toMatchObject({
      untoldSince: expect.any(Number),
      toldAt: null,
      refused: { refusals: 1, reason: 'too big' },
    });
    expect((await store.message('m2'))?.waiters[0]).not.toHaveProperty('refused');
    // An outage's failure is not the workflow's: nothing counted.
    expect(await store.outbox.refusal('wf-b')).toBeNull();
    expect((await store.outbox.backlog()).refusedWorkflows).toBe(1);
    expect(await untoldIds(store, { now: now + 1000 })).toEqual(['wf-b']);
    expect(await store.outbox.claim(['wf-a'], claimBy('relay-2', now + 59_999))).toEqual({
      outcomes: [],
      held: ['wf-a'],
      deferred: [],
    });
    expect(await store.outbox.forgetClaims(now + 120_000)).toBe(1); // wf-b's; wf-a's keeps its refusals
    const again = await store.outbox.claim(['wf-a'], claimBy('relay-2', now + 60_000));
    expect(again.outcomes.map((w) => [w.workflowId, w.refusals])).toEqual([['wf-a', 1]]);
    await store.outbox.finish('relay-2', { ...nothing, told: [{ workflowId: 'wf-a', providerMessageIds: ['m1'] }] });
    expect(await store.outbox.refusal('wf-a')).toBeNull();
    expect((await store.outbox.backlog()).refusedWorkflows).toBe(0);
  });
});
