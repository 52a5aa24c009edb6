/**
 * The worker's side of the request budget (storeRequestGate) over a fake store: a refused call waits as long
 * as the store says and asks again, calls of one class take turns first come first served, and an aborted
 * call stops waiting.
 */
import { describe, expect, it } from 'vitest';
import type { BudgetAnswer, RequestClass } from '../../src/store/index.js';
import { storeRequestGate } from '../../src/temporal/request-classes.js';

/** A store that answers from `answers` in order (then grants), recording who asked when. */
function fakeStore(answers: BudgetAnswer[]) {
  const asked: Array<{ kind: RequestClass; at: number }> = [];
  const started = Date.now();
  return {
    asked,
    store: {
      takeRequest: async (_name: string, _settings: unknown, kind: RequestClass) => {
        asked.push({ kind, at: Date.now() - started });
        return answers.shift() ?? { granted: true as const };
      },
    },
  };
}

describe('storeRequestGate', () => {
  it('waits the time the store names, then asks again until granted', async () => {
    const { store, asked } = fakeStore([
      { granted: false, waitMs: 50 },
      { granted: false, waitMs: 50 },
    ]);
    await storeRequestGate(store, 'provider', 120)('bulk');
    expect(asked.map((a) => a.kind)).toEqual(['bulk', 'bulk', 'bulk']);
    expect(asked[2]!.at).toBeGreaterThanOrEqual(95);
  });

  it('lets calls of one class ask in the order they came, each after the one before it was granted', async () => {
    const { store, asked } = fakeStore([{ granted: false, waitMs: 30 }]);
    const gate = storeRequestGate(store, 'provider', 120);
    const order: string[] = [];
    await Promise.all([
      gate('interactive').then(() => order.push('first')),
      gate('interactive').then(() => order.push('second')),
    ]);
    expect(order).toEqual(['first', 'second']);
    expect(asked).toHaveLength(3);
  });

  it('stops waiting when its signal aborts', async () => {
    const { store } = fakeStore([{ granted: false, waitMs: 60_000 }]);
    const abort = new AbortController();
    const waiting = storeRequestGate(store, 'provider', 120)('bulk', abort.signal);
    setTimeout(() => abort.abort(new Error('activity cancelled')), 20);
    await expect(waiting).rejects.toThrow();
    const aborted = new AbortController();
    aborted.abort();
    await expect(storeRequestGate(fakeStore([]).store, 'provider', 120)('bulk', aborted.signal)).rejects.toThrow();
  });
});
