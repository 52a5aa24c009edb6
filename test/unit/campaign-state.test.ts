/** The campaign's pure state transitions: chunks sent, outcomes counted once, early outcomes, overdue ids, the operator view. */
import { describe, expect, it } from 'vitest';
import {
  detailsOf,
  EarlyOutcomes,
  initialState,
  Outstanding,
  progressOf,
  recordChunkSent,
  recordOutcomes,
  resultOf,
} from '../../workflows/campaign-state.js';

const outcome = (id: string, status = 'delivered') => ({ providerMessageId: id, status: status as 'delivered' });

function sentCampaign() {
  const state = initialState('2026-11-23T08:00:00.000Z', { kind: 'list', remaining: [] });
  state.runs = 1;
  state.valid = 3;
  state.pendingChunks = [{ number: 0, recipients: ['a', 'b', 'c'] }];
  const outstanding = new Outstanding();
  recordChunkSent(state, outstanding, 0, { providerMessageIds: ['m1', 'm2', 'm3'], cost: 9, currency: 'USD' }, 1000);
  return { state, outstanding };
}

describe('campaign state', () => {
  it('records a sent chunk: no longer pending, its messages awaited until their deadline', () => {
    const { state, outstanding } = sentCampaign();
    expect(state).toMatchObject({ pendingChunks: [], chunksSent: 1, sent: 3, cost: 9, currency: 'USD' });
    expect(outstanding.size).toBe(3);
    expect(outstanding.nextDeadline()).toBe(1000);
  });

  it('counts each awaited outcome once; duplicates, conflicts and unknown ids change nothing', () => {
    const { state, outstanding } = sentCampaign();
    expect(recordOutcomes(state, outstanding, [outcome('m1'), outcome('m1', 'failed'), outcome('zz')])).toEqual([
      outcome('m1'),
    ]);
    expect(recordOutcomes(state, outstanding, [outcome('m1', 'failed')])).toEqual([]);
    expect(state.counts).toMatchObject({ delivered: 1, failed: 0 });
    expect(outstanding.size).toBe(2);
  });

  it('reports a message that never reached a final state as not final', () => {
    const { state, outstanding } = sentCampaign();
    recordOutcomes(state, outstanding, [{ providerMessageId: 'm2', status: 'sent' as 'delivered' }]);
    expect(state.counts.sent).toBe(1);
    expect(state).toMatchObject({ notFinalCount: 1, notFinalIds: ['m2'] });
  });

  it('lists overdue ids up to a limit, leaving them awaited until their outcome is recorded', () => {
    const outstanding = new Outstanding();
    outstanding.add(['a', 'b', 'c'], 100);
    outstanding.add(['d'], 500);
    expect(outstanding.overdue(99, 10)).toEqual([]);
    expect(outstanding.overdue(100, 2)).toEqual(['a', 'b']);
    expect(outstanding.size).toBe(4);
    expect(Outstanding.from(outstanding.toGroups()).overdue(1000, 10).sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('holds outcomes that arrive before their chunk is known, and hands them over once', () => {
    const early = new EarlyOutcomes<ReturnType<typeof outcome>>();
    const signalled = [outcome('m1'), outcome('x1'), outcome('x2', 'failed')];
    early.hold(signalled, [outcome('m1')]);
    expect(early.size).toBe(2);
    expect(early.claim(['x2', 'x9'])).toEqual([outcome('x2', 'failed')]);
    expect(early.claim(['x2'])).toEqual([]);
    early.clear();
    expect(early.claim(['x1'])).toEqual([]);
  });

  it('tells operators where the campaign stands, and sums it up at the end', () => {
    const { state, outstanding } = sentCampaign();
    recordOutcomes(state, outstanding, [outcome('m1'), outcome('m2', 'undelivered')]);
    const progress = progressOf(state, outstanding, 'draining', null);
    expect(progress).toMatchObject({ phase: 'draining', sent: 3, queued: 1, chunks: 1 });
    expect(detailsOf(progress).split('\n\n')).toEqual([
      '**draining**',
      'sent 3 of 3, awaiting 1',
      'final: delivered 1, undelivered 1',
      'cost 9 USD, run 1',
    ]);
    expect(resultOf(state, '2026-11-23T09:00:00.000Z')).toMatchObject({
      sent: 3,
      completedAt: '2026-11-23T09:00:00.000Z',
    });
  });

  it('says why a campaign is paused, what was suppressed, and that nothing is final yet', () => {
    const state = initialState('2026-11-23T08:00:00.000Z', { kind: 'list', remaining: [] });
    Object.assign(state, { runs: 2, valid: 5, suppressed: 2, paused: true, pausedReason: 'insufficient balance' });
    expect(detailsOf(progressOf(state, new Outstanding(), 'paused', null)).split('\n\n')).toEqual([
      '**paused** (insufficient balance)',
      'sent 0 of 5, awaiting 0, suppressed 2',
      'final: none yet',
      'cost 0, run 2',
    ]);
  });
});
