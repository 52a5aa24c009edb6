/** Every store operation, on SQLite and on a real PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MessageStore, type MessageStoreOptions, StoreInputError } from '../../src/store/index.js';
import { type DialectHarness, DIALECTS, harness } from './dialects.js';

const HOUR = 60 * 60 * 1000;
const future = () => new Date(Date.now() + HOUR);
const past = () => new Date(Date.now() - HOUR);
const delivered = (id: string, timestamp = '2026-01-01T00:00:00Z', eventId?: string) => ({
  providerMessageId: id,
  status: 'delivered',
  timestamp,
  ...(eventId ? { eventId } : {}),
});

describe.each(DIALECTS)('message store on %s', (dialect) => {
  let h: DialectHarness;
  let store: MessageStore;
  let location: Pick<MessageStoreOptions, 'file' | 'url'>;

  beforeAll(async () => {
    h = await harness(dialect);
  });
  afterAll(() => h?.close());

  /** A store on a database of its own. */
  async function fresh(options: MessageStoreOptions = {}): Promise<MessageStore> {
    location = await h.freshLocation();
    store = await h.open(location, options);
    return store;
  }

  it('reports the dialect it was opened with', async () => {
    expect((await fresh()).dialect).toBe(dialect);
  });

  it('registration first: the event returns the outcome for the waiting workflow', async () => {
    await fresh();
    expect(await store.register('wf-a', [{ providerMessageId: 'm1' }])).toEqual([]);
    expect(await store.recordEvents([delivered('m1', '2026-01-01T00:00:01Z', 'evt-1')])).toEqual([
      {
        workflowId: 'wf-a',
        outcomes: [
          { providerMessageId: 'm1', status: 'delivered', timestamp: '2026-01-01T00:00:01Z', eventId: 'evt-1' },
        ],
        // Its only message: it waits for nothing else now.
        allFinal: true,
      },
    ]);
  });

  it('event first: it is kept as an orphan and the registration returns its outcome', async () => {
    await fresh();
    expect(await store.recordEvents([{ providerMessageId: 'm1', status: 'failed', timestamp: 't1' }])).toEqual([]);
    expect(await store.register('wf-a', [{ providerMessageId: 'm1' }, { providerMessageId: 'm2' }])).toEqual([
      { providerMessageId: 'm1', status: 'failed', timestamp: 't1', eventId: null },
    ]);
  });

  it('the first final state wins; duplicates and conflicts change nothing but still return the outcome', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }]);
    const first = { providerMessageId: 'm1', status: 'delivered', timestamp: 't1', eventId: null };
    const outcome = { workflowId: 'wf-a', outcomes: [first], allFinal: true };
    expect(await store.recordEvents([delivered('m1', 't1')])).toEqual([outcome]);
    // A redelivery after a failed signal must signal again; a conflicting later event must not win.
    expect(await store.recordEvents([delivered('m1', 't1')])).toEqual([outcome]);
    expect(
      await store.recordEvents([{ providerMessageId: 'm1', status: 'undelivered', timestamp: 't2', eventId: 'e2' }]),
    ).toEqual([outcome]);
    expect(await store.outcomes(['m1'])).toEqual([first]);
  });

  it('within one body, the first final event of a message wins and non-final events are kept as last status', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }, { providerMessageId: 'm2' }]);
    // m2 is only sent: wf-a still waits for it (no allFinal).
    const result = await store.recordEvents([
      { providerMessageId: 'm2', status: 'sent', timestamp: 't0' },
      { providerMessageId: 'm1', status: 'expired', timestamp: 't1' },
      { providerMessageId: 'm1', status: 'delivered', timestamp: 't2' },
    ]);
    expect(result).toEqual([
      {
        workflowId: 'wf-a',
        outcomes: [{ providerMessageId: 'm1', status: 'expired', timestamp: 't1', eventId: null }],
      },
    ]);
    const m2 = await store.message('m2');
    expect(m2).toMatchObject({ final: null, lastStatus: 'sent', lastStatusTimestamp: 't0' });
    await store.recordEvents([{ providerMessageId: 'm2', status: 'rejected', timestamp: 't3' }]);
    expect(await store.message('m2')).toMatchObject({
      final: { status: 'rejected', timestamp: 't3' },
      lastStatus: 'sent',
    });
  });

  it('groups outcomes by waiting workflow, one entry per workflow, for several waiters of one message', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }, { providerMessageId: 'm2' }]);
    await store.register('wf-b', [{ providerMessageId: 'm2' }]);
    const result = await store.recordEvents([delivered('m1', 't1'), delivered('m2', 't2'), delivered('m3', 't3')]);
    const byWorkflow = Object.fromEntries(
      result.map((r) => [r.workflowId, r.outcomes.map((o) => o.providerMessageId).sort()]),
    );
    expect(byWorkflow).toEqual({ 'wf-a': ['m1', 'm2'], 'wf-b': ['m2'] });
  });

  it("returns the distinct traceparents of each waiter's messages, the first registered one per message", async () => {
    await fresh();
    const [sendA, sendB, later] = ['a', 'b', 'c'].map((c) => `00-${c.repeat(32)}-${c.repeat(16)}-01`);
    await store.register('wf-a', [
      { providerMessageId: 'm1', traceParent: sendA },
      { providerMessageId: 'm2', traceParent: sendA },
      { providerMessageId: 'm3', traceParent: sendB },
      // A message sent untraced beside traced ones (an activity's retry after tracing was turned on).
      { providerMessageId: 'm6' },
    ]);
    // A second registration (another waiter, an activity's retry) keeps the send's traceparent.
    await store.register('wf-b', [{ providerMessageId: 'm1', traceParent: later }, { providerMessageId: 'm4' }]);
    // A message first registered untraced takes the traceparent of a traced registration after it.
    await store.register('wf-c', [{ providerMessageId: 'm4', traceParent: later }]);
    const waiting = await store.recordEvents(['m1', 'm2', 'm3', 'm4', 'm6'].map((id) => delivered(id)));
    const byWorkflow = Object.fromEntries(waiting.map((w) => [w.workflowId, w.traceParents]));
    expect(byWorkflow).toEqual({ 'wf-a': [sendA, sendB], 'wf-b': [sendA, later], 'wf-c': [later] });
    // Messages sent without a trace: no traceparents at all.
    await store.register('wf-d', [{ providerMessageId: 'm5' }]);
    expect(await store.recordEvents([delivered('m5')])).toEqual([
      { workflowId: 'wf-d', outcomes: [expect.objectContaining({ providerMessageId: 'm5' })], allFinal: true },
    ]);
    expect((await store.recordEvents([delivered('m5')]))[0]).not.toHaveProperty('traceParents');
  });

  it('registering twice is harmless: one waiter, its first registration time kept', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1', campaignKey: 'c1' }]);
    const before = await store.message('m1');
    await store.register('wf-a', [{ providerMessageId: 'm1' }, { providerMessageId: 'm1' }]);
    const after = await store.message('m1');
    expect(after?.waiters).toEqual(before?.waiters);
    expect(after?.waiters).toHaveLength(1);
    expect(after?.campaignKey).toBe('c1');
  });

  it('handles 1,000 ids per call', async () => {
    await fresh();
    const ids = Array.from({ length: 1000 }, (_, i) => `bulk-${String(i).padStart(4, '0')}`);
    // Half of them are final before their sender registers.
    await store.recordEvents(ids.slice(0, 500).map((id) => delivered(id, 't-early')));
    const early = await store.register(
      'wf-bulk',
      ids.map((id) => ({ providerMessageId: id, number: `+1555${id.slice(-4)}000`, campaignKey: 'bulk' })),
    );
    expect(early.map((o) => o.providerMessageId)).toEqual(ids.slice(0, 500));
    const late = await store.recordEvents(ids.map((id) => delivered(id, 't-late')));
    expect(late).toHaveLength(1);
    expect(late[0]!.outcomes).toHaveLength(1000);
    expect(new Set(late[0]!.outcomes.map((o) => o.timestamp))).toEqual(new Set(['t-early', 't-late']));
    expect(await store.outcomes(ids)).toHaveLength(1000);
  });

  it('outcomes lists only the messages that are final', async () => {
    await fresh();
    await store.recordEvents([delivered('m1', 't1'), { providerMessageId: 'm2', status: 'sent', timestamp: 't2' }]);
    expect(await store.outcomes(['m1', 'm2', 'unknown', 'm1'])).toEqual([
      { providerMessageId: 'm1', status: 'delivered', timestamp: 't1', eventId: null },
    ]);
    expect(await store.outcomes([])).toEqual([]);
  });

  it('a released waiter is no longer signalled; registering again reinstates it', async () => {
    await fresh();
    await store.register('wf-a', [
      { providerMessageId: 'm1' },
      { providerMessageId: 'm2' },
      { providerMessageId: 'm3' },
    ]);
    expect(await store.release('wf-a', ['m1'])).toBe(1);
    expect(await store.recordEvents([delivered('m1'), delivered('m2')])).toEqual([
      { workflowId: 'wf-a', outcomes: [expect.objectContaining({ providerMessageId: 'm2' })] },
    ]);
    expect(await store.release('wf-a')).toBe(2);
    expect(await store.release('wf-a')).toBe(0);
    expect(await store.recordEvents([delivered('m3')])).toEqual([]);
    expect((await store.message('m3'))?.waiters[0]?.releasedAt).toEqual(expect.any(Number));
    await store.register('wf-a', [{ providerMessageId: 'm3' }]);
    expect((await store.message('m3'))?.waiters[0]?.releasedAt).toBeNull();
    expect(await store.recordEvents([delivered('m3')])).toHaveLength(1);
  });

  it('purge deletes old messages, never one a waiter still waits for unless its registration is abandoned', async () => {
    await fresh();
    await store.recordEvents([delivered('orphan')]);
    await store.register('wf-waiting', [{ providerMessageId: 'awaited' }]);
    await store.register('wf-done', [{ providerMessageId: 'released' }]);
    await store.release('wf-done');
    await store.recordRejected('bad status', { provider_message_id: 'x' });

    // Nothing is older than an hour ago.
    expect(await store.purge({ olderThan: past() })).toEqual({ messages: 0, rejectedEvents: 0, otpEvents: 0 });
    // Everything is older than an hour ahead, but the awaited message has an unreleased waiter.
    expect(await store.purge({ olderThan: future() })).toEqual({ messages: 2, rejectedEvents: 1, otpEvents: 0 });
    expect(await store.message('orphan')).toBeNull();
    expect(await store.message('released')).toBeNull();
    expect(await store.message('awaited')).not.toBeNull();
    // A waiter registered after the abandonment cutoff still keeps it...
    expect(await store.purge({ olderThan: future(), abandonWaitersRegisteredBefore: past() })).toMatchObject({
      messages: 0,
    });
    // ...one registered before it does not.
    expect(await store.purge({ olderThan: future(), abandonWaitersRegisteredBefore: future() })).toMatchObject({
      messages: 1,
    });
    expect(await store.message('awaited')).toBeNull();
    // Its waiter went with it: a new event for the id is an orphan.
    expect(await store.recordEvents([delivered('awaited')])).toEqual([]);
  });

  it('purge works through more messages than one batch', async () => {
    await fresh();
    const ids = Array.from({ length: 1200 }, (_, i) => `old-${i}`);
    await store.recordEvents(ids.slice(0, 1000).map((id) => delivered(id)));
    await store.recordEvents(ids.slice(1000).map((id) => delivered(id)));
    expect(await store.purge({ olderThan: future() })).toEqual({ messages: 1200, rejectedEvents: 0, otpEvents: 0 });
  });

  it('report pages through a campaign with numbers, current statuses and a status filter', async () => {
    await fresh();
    const messages = ['r1', 'r2', 'r3', 'r4', 'r5'].map((id, i) => ({
      providerMessageId: id,
      number: `+44700000000${i}`,
      campaignKey: 'camp',
    }));
    await store.register('wf-camp', messages);
    await store.register('wf-other', [{ providerMessageId: 'x1', number: '+15550000000', campaignKey: 'other' }]);
    await store.recordEvents([
      delivered('r1', 't1'),
      { providerMessageId: 'r2', status: 'undelivered', timestamp: 't2' },
      { providerMessageId: 'r3', status: 'sent', timestamp: 't3' },
      delivered('r4', 't4'),
    ]);
    const rows = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await store.report({ campaignKey: 'camp', limit: 2, ...(after ? { after } : {}) });
      rows.push(...page.rows);
      after = page.next ?? undefined;
      pages += 1;
    } while (after);
    expect(pages).toBe(3);
    expect(rows).toEqual([
      {
        providerMessageId: 'r1',
        number: '+447000000000',
        status: 'delivered',
        final: true,
        timestamp: 't1',
        source: 'webhook',
      },
      {
        providerMessageId: 'r2',
        number: '+447000000001',
        status: 'undelivered',
        final: true,
        timestamp: 't2',
        source: 'webhook',
      },
      { providerMessageId: 'r3', number: '+447000000002', status: 'sent', final: false, timestamp: 't3', source: null },
      {
        providerMessageId: 'r4',
        number: '+447000000003',
        status: 'delivered',
        final: true,
        timestamp: 't4',
        source: 'webhook',
      },
      { providerMessageId: 'r5', number: '+447000000004', status: null, final: false, timestamp: null, source: null },
    ]);
    const deliveredOnly = await store.report({ campaignKey: 'camp', status: 'delivered', limit: 10 });
    expect(deliveredOnly.rows.map((r) => r.providerMessageId)).toEqual(['r1', 'r4']);
    expect(deliveredOnly.next).toBeNull();
    await expect(store.report({ campaignKey: 'camp', limit: 10, after: 'not a cursor!' })).rejects.toThrow(
      StoreInputError,
    );
  });

  it('message shows one message with its waiters; unknown ids give null', async () => {
    await fresh();
    await store.register('wf-b', [{ providerMessageId: 'm1', number: '+15551234567', campaignKey: 'c' }]);
    await store.register('wf-a', [{ providerMessageId: 'm1' }]);
    const m = await store.message('m1');
    expect(m).toMatchObject({
      providerMessageId: 'm1',
      final: null,
      number: '+15551234567',
      campaignKey: 'c',
      waiters: [
        { workflowId: 'wf-a', releasedAt: null },
        { workflowId: 'wf-b', releasedAt: null },
      ],
    });
    expect(m!.lastSeenAt).toBeGreaterThanOrEqual(m!.firstSeenAt);
    expect(await store.message('nope')).toBeNull();
  });

  it('finds messages by number', async () => {
    await fresh();
    await store.register('wf', [
      { providerMessageId: 'a', number: '+15550000001' },
      { providerMessageId: 'b', number: '+15550000002' },
      { providerMessageId: 'c', number: '+15550000001' },
    ]);
    expect(await store.messagesTo('+15550000001')).toEqual(['a', 'c']);
    expect(await store.messagesTo('+15559999999')).toEqual([]);
  });

  it('keeps rejected events for an operator, newest first, a page at a time', async () => {
    await fresh();
    for (let i = 1; i <= 3; i++) await store.recordRejected(`reason ${i}`, { n: i, mobile_number: '+15550000000' });
    const first = await store.rejected({ limit: 2 });
    expect(first.rows.map((r) => [r.reason, r.event])).toEqual([
      ['reason 3', { n: 3, mobile_number: '+15550000000' }],
      ['reason 2', { n: 2, mobile_number: '+15550000000' }],
    ]);
    const second = await store.rejected({ limit: 2, before: first.next! });
    expect(second.rows.map((r) => r.reason)).toEqual(['reason 1']);
    expect(second.next).toBeNull();
  });

  if (dialect === 'postgres')
    it('keeps its data and reconnects when the server restarts', async () => {
      await fresh();
      await store.register('wf-a', [{ providerMessageId: 'm1' }]);
      await h.restart!();
      // The pool's connections died with the server; the next operations open new ones.
      expect(await store.recordEvents([delivered('m1', 't1')])).toEqual([
        {
          workflowId: 'wf-a',
          outcomes: [expect.objectContaining({ providerMessageId: 'm1', timestamp: 't1' })],
          allFinal: true,
        },
      ]);
      expect(await store.outcomes(['m1'])).toHaveLength(1);
    });

  it('rejects bad input with a clear error', async () => {
    await fresh();
    await expect(store.register('', [{ providerMessageId: 'm' }])).rejects.toThrow(/workflowId/);
    await expect(store.register('wf', [{ providerMessageId: '' }])).rejects.toThrow(StoreInputError);
    await expect(store.register('wf', [{ providerMessageId: 'm', number: '' }])).rejects.toThrow(/number/);
    await expect(store.recordEvents([{ providerMessageId: 'm', status: '', timestamp: 't' }])).rejects.toThrow(
      /status/,
    );
    await expect(store.report({ campaignKey: 'c', limit: 0 })).rejects.toThrow(/limit/);
    await expect(store.purge({ olderThan: new Date('nonsense') })).rejects.toThrow(/olderThan/);
  });
});
