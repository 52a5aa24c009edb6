/**
 * The campaign's pure state, page by page: a fresh state, chunks cut from a page's groups, suppressed numbers
 * taken out of their groups, what waits to be sent, the next deadline, and the capped samples of invalid
 * entries and messages that never reached a final state.
 */
import { describe, expect, it } from 'vitest';
import { MAX_REPORTED_ITEMS } from '../../src/api/constants.js';
import {
  initialState,
  Outstanding,
  queueChunks,
  recordChunkSent,
  recordInvalid,
  recordNotFinal,
  recordOutcome,
  recordSuppressed,
  resultOf,
  waitingRecipients,
  withoutSuppressed,
} from '../../workflows/campaign-state.js';

const fresh = () => initialState('2026-11-23T08:00:00.000Z', { kind: 'list', remaining: [] });
const page = { cursor: null, limit: 4, firstIndex: 0 };

describe('a fresh campaign', () => {
  it('starts before its pre-flight, neither paused nor cancelled, with nothing counted', () => {
    expect(fresh()).toMatchObject({
      preflightDone: false,
      paused: false,
      pausedReason: null,
      cancelled: false,
      sent: 0,
      invalidCount: 0,
      notFinalCount: 0,
      pendingChunks: [],
    });
  });
});

describe('queueChunks', () => {
  it('queues all recipients as one chunk when no groups are given', () => {
    const state = fresh();
    expect(queueChunks(state, ['a', 'b'])).toEqual([{ number: 0, recipients: ['a', 'b'] }]);
    expect(state.pendingChunks).toHaveLength(1);
  });

  it('cuts one chunk per group, in order, skipping empty groups, with the page and zone they belong to', () => {
    const state = fresh();
    const chunks = queueChunks(
      state,
      ['a', 'b', 'c', 'd'],
      [{ size: 1, timeZone: 'Africa/Lagos' }, { size: 0 }, { size: 3 }],
      page as never,
    );
    expect(chunks).toEqual([
      { number: 0, recipients: ['a'], page, timeZone: 'Africa/Lagos' },
      { number: 1, recipients: ['b', 'c', 'd'], page },
    ]);
    expect(queueChunks(state, ['e'])).toEqual([{ number: 2, recipients: ['e'] }]);
  });
});

describe('withoutSuppressed', () => {
  it('changes nothing when nothing is suppressed', () => {
    expect(withoutSuppressed(['a', 'b'], undefined, [])).toEqual({ recipients: ['a', 'b'], groups: [{ size: 2 }] });
    const groups = [{ size: 1, timeZone: 'Z' }, { size: 1 }];
    expect(withoutSuppressed(['a', 'b'], groups, [])).toEqual({ recipients: ['a', 'b'], groups });
  });

  it('takes suppressed numbers out of their own group, keeping each group in its place', () => {
    const groups = [
      { size: 2, timeZone: 'A' },
      { size: 1, timeZone: 'B' },
      { size: 2, timeZone: 'C' },
    ];
    expect(withoutSuppressed(['a', 'b', 'c', 'd', 'e'], groups, ['b', 'c'])).toEqual({
      recipients: ['a', 'd', 'e'],
      groups: [
        { size: 1, timeZone: 'A' },
        { size: 0, timeZone: 'B' },
        { size: 2, timeZone: 'C' },
      ],
    });
    expect(withoutSuppressed(['a', 'b', 'c'], undefined, ['a'])).toEqual({
      recipients: ['b', 'c'],
      groups: [{ size: 2 }],
    });
  });
});

describe('waiting recipients and sent chunks', () => {
  it('counts recipients of pending chunks not being sent', () => {
    const state = fresh();
    queueChunks(state, ['a', 'b', 'c'], [{ size: 2 }, { size: 1 }]);
    expect(waitingRecipients(state, new Map())).toBe(3);
    expect(waitingRecipients(state, new Map([[0, 1]]))).toBe(1);
  });

  it('drops only the sent chunk from the pending ones', () => {
    const state = fresh();
    queueChunks(state, ['a', 'b', 'c'], [{ size: 2 }, { size: 1 }]);
    recordChunkSent(state, new Outstanding(), 0, { providerMessageIds: ['m1', 'm2'], cost: 6, currency: 'USD' }, 10);
    expect(state.pendingChunks).toEqual([{ number: 1, recipients: ['c'] }]);
  });
});

describe('Outstanding', () => {
  it('knows the earliest deadline, whatever order they came in', () => {
    const outstanding = new Outstanding();
    expect(outstanding.nextDeadline()).toBeNull();
    outstanding.add(['m1'], 300);
    outstanding.add(['m2'], 100);
    outstanding.add(['m3'], 200);
    expect(outstanding.nextDeadline()).toBe(100);
    outstanding.settle('m2');
    expect(outstanding.nextDeadline()).toBe(200);
  });
});

describe('counts and samples', () => {
  const invalid = (index: number) => ({ index, value: '**', reason: 'unknown number format' });

  it('adds suppressed numbers up', () => {
    const state = fresh();
    recordSuppressed(state, 2);
    recordSuppressed(state, 3);
    expect(resultOf(state, 'end').suppressed).toBe(5);
  });

  it('counts every invalid entry and keeps a sample of the first ones', () => {
    const state = fresh();
    recordInvalid(state, [invalid(0), invalid(1)]);
    expect(state).toMatchObject({ invalidCount: 2, invalidSample: [invalid(0), invalid(1)] });
    recordInvalid(
      state,
      Array.from({ length: MAX_REPORTED_ITEMS }, (_, i) => invalid(i + 2)),
    );
    expect(state.invalidCount).toBe(MAX_REPORTED_ITEMS + 2);
    expect(state.invalidSample).toHaveLength(MAX_REPORTED_ITEMS);
    expect(state.invalidSample.at(-1)).toEqual(invalid(MAX_REPORTED_ITEMS - 1));
    recordInvalid(state, [invalid(999)]);
    expect(state.invalidSample).toHaveLength(MAX_REPORTED_ITEMS);
  });

  it('counts messages without a final state, keeping the first ids; a final outcome is not one of them', () => {
    const state = fresh();
    recordOutcome(state, { providerMessageId: 'm0', status: 'delivered' });
    expect(state.notFinalCount).toBe(0);
    recordOutcome(state, { providerMessageId: 'm1', status: 'unknown' as never });
    for (let i = 2; i <= MAX_REPORTED_ITEMS + 1; i++) recordNotFinal(state, `m${i}`);
    expect(state.notFinalCount).toBe(MAX_REPORTED_ITEMS + 1);
    expect(state.notFinalIds).toHaveLength(MAX_REPORTED_ITEMS);
    expect(state.notFinalIds.at(-1)).toBe(`m${MAX_REPORTED_ITEMS}`);
  });

  it('hands out a copy of the counts in the result', () => {
    const state = fresh();
    recordOutcome(state, { providerMessageId: 'm0', status: 'delivered' });
    const result = resultOf(state, 'end');
    expect(result.counts.delivered).toBe(1);
    recordOutcome(state, { providerMessageId: 'm1', status: 'delivered' });
    expect(result.counts.delivered).toBe(1);
  });
});
