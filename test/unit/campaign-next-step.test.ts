/**
 * The campaign loop's order of precedence (`nextStep` in workflows/campaign-state.ts) without a workflow: each
 * rung against a turn where everything below it would also apply, and which questions are asked at all (a
 * question with an effect, like the read-ahead patch gate, must only be asked where its answer matters).
 */
import { describe, expect, it } from 'vitest';
import { type CampaignTurn, nextStep } from '../../workflows/campaign-state.js';

/** A turn with nothing to do but send: the answers of `overrides` replace the defaults; every question asked is logged. */
function turn(overrides: Partial<{ [K in keyof CampaignTurn]: ReturnType<CampaignTurn[K]> }> = {}) {
  const asked: string[] = [];
  const answers: { [K in keyof CampaignTurn]: ReturnType<CampaignTurn[K]> } = {
    shouldContinueAsNew: false,
    sendsInFlight: 0,
    overdue: [],
    failed: false,
    cancelled: false,
    moreToSend: true,
    awaited: 0,
    paused: false,
    windowOpensAt: null,
    chunksOpenAt: null,
    canStartSend: true,
    mayReadAhead: false,
    throttled: false,
    ...overrides,
  };
  const view = Object.fromEntries(
    Object.entries(answers).map(([name, answer]) => [
      name,
      () => {
        asked.push(name);
        return answer;
      },
    ]),
  ) as unknown as CampaignTurn;
  return { view, asked };
}
const stepOf = (overrides: Parameters<typeof turn>[0]) => nextStep(turn(overrides).view);

describe('the campaign loop', () => {
  it('sends when nothing else applies', () => {
    expect(stepOf({})).toEqual({ kind: 'send' });
  });

  it('continues as new once the sends in flight have answered, unless a failure waits to be acted on', () => {
    expect(stepOf({ shouldContinueAsNew: true, sendsInFlight: 2, overdue: ['m1'] })).toEqual({
      kind: 'sends-before-continuing',
    });
    expect(stepOf({ shouldContinueAsNew: true, overdue: ['m1'], paused: true })).toEqual({ kind: 'continue-as-new' });
    expect(stepOf({ shouldContinueAsNew: true, failed: true })).toEqual({ kind: 'act-on-failure' });
  });

  it('settles overdue messages before acting on a failure, a pause or a window', () => {
    expect(stepOf({ overdue: ['m1', 'm2'], failed: true, paused: true, windowOpensAt: 5 })).toEqual({
      kind: 'settle-overdue',
      ids: ['m1', 'm2'],
    });
  });

  it('acts on a failure once every send in flight has answered', () => {
    expect(stepOf({ failed: true, sendsInFlight: 1 })).toEqual({ kind: 'sends-before-failure' });
    expect(stepOf({ failed: true, cancelled: true })).toEqual({ kind: 'act-on-failure' });
  });

  it('drains when cancelled or when nothing is left to send, and finishes once nothing is awaited or sending', () => {
    expect(stepOf({ cancelled: true, awaited: 3, paused: true })).toEqual({ kind: 'drain' });
    expect(stepOf({ moreToSend: false, sendsInFlight: 1 })).toEqual({ kind: 'drain' });
    expect(stepOf({ moreToSend: false })).toEqual({ kind: 'finish' });
    expect(stepOf({ cancelled: true })).toEqual({ kind: 'finish' });
  });

  it("waits while paused, then for the campaign window, then for the recipients' own windows", () => {
    expect(stepOf({ paused: true, windowOpensAt: 5, chunksOpenAt: 7 })).toEqual({ kind: 'paused' });
    expect(stepOf({ windowOpensAt: 5, chunksOpenAt: 7 })).toEqual({
      kind: 'outside-window',
      opensAt: 5,
      perChunk: false,
    });
    expect(stepOf({ chunksOpenAt: 7, canStartSend: false })).toEqual({
      kind: 'outside-window',
      opensAt: 7,
      perChunk: true,
    });
    expect(stepOf({ windowOpensAt: 0 })).toEqual({ kind: 'outside-window', opensAt: 0, perChunk: false });
  });

  it('with no room to send, reads ahead when it may, else waits for room, saying whether it is throttled', () => {
    expect(stepOf({ canStartSend: false, mayReadAhead: true, throttled: true })).toEqual({ kind: 'read-ahead' });
    expect(stepOf({ canStartSend: false, throttled: true })).toEqual({ kind: 'wait-for-room', throttled: true });
    expect(stepOf({ canStartSend: false })).toEqual({ kind: 'wait-for-room', throttled: false });
  });

  it('asks whether it may read ahead only when nothing can be sent, and nothing past the rung that decides', () => {
    const sending = turn();
    nextStep(sending.view);
    expect(sending.asked).not.toContain('mayReadAhead');
    expect(sending.asked).not.toContain('throttled');
    const waiting = turn({ canStartSend: false });
    nextStep(waiting.view);
    expect(waiting.asked.slice(-3)).toEqual(['canStartSend', 'mayReadAhead', 'throttled']);
    const overdue = turn({ overdue: ['m1'] });
    nextStep(overdue.view);
    expect(overdue.asked).toEqual(['shouldContinueAsNew', 'overdue']);
  });
});
