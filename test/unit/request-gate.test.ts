/**
 * The worker's side of the request budget (storeRequestGate) over a fake store: a refused call waits as long
 * as the store says and asks again, calls of one class (bulk: of one team) take turns first come first served,
 * teams never wait in each other's line, each bulk ask carries its team's weight read at that moment, and an
 * aborted call stops waiting.
 */
import { describe, expect, it } from 'vitest';
import type { BudgetAnswer, RequestAsk, RequestClass } from '../../src/store/index.js';
import { storeRequestGate } from '../../src/temporal/request-classes.js';

/** A store that answers from `answers` in order (then grants), recording who asked when. */
function fakeStore(answers: BudgetAnswer[] | ((ask: RequestAsk) => BudgetAnswer)) {
  const asked: Array<{ kind: RequestClass; at: number; team?: string; weight?: number }> = [];
  const started = Date.now();
  return {
    asked,
    store: {
      takeRequest: async (_name: string, _settings: unknown, ask: RequestAsk) => {
        const at = Date.now() - started;
        asked.push(typeof ask === 'string' ? { kind: ask, at } : { kind: 'bulk', at, ...ask });
        if (typeof answers === 'function') return answers(ask);
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

  it('keeps a line in order for a call that joins it while earlier ones still wait', async () => {
    // Each answer takes a moment, so calls asking side by side would be granted out of order.
    const store = {
      takeRequest: () => new Promise<BudgetAnswer>((answer) => setTimeout(() => answer({ granted: true }), 5)),
    };
    const gate = storeRequestGate(store, 'provider', 120);
    const order: number[] = [];
    const first = gate('bulk').then(() => order.push(1));
    const others = [gate('bulk').then(() => order.push(2)), gate('bulk').then(() => order.push(3))];
    await first;
    await Promise.all([...others, gate('bulk').then(() => order.push(4))]);
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it('asks bulk requests for their team at its weight now, in one line per team', async () => {
    let clinicWeight = 1;
    // Clinic is refused until marketing has been granted: marketing must not wait in clinic's line.
    let marketingGranted = false;
    const { store, asked } = fakeStore((ask) =>
      typeof ask !== 'string' && ask.team === 'clinic' && !marketingGranted
        ? { granted: false, waitMs: 20 }
        : ((marketingGranted ||= typeof ask !== 'string' && ask.team === 'marketing'), { granted: true }),
    );
    const gate = storeRequestGate(store, 'provider', 120, (team) => (team === 'clinic' ? clinicWeight : 1));
    const clinic = gate('bulk', undefined, 'clinic');
    await gate('bulk', undefined, 'marketing');
    clinicWeight = 3; // read again when clinic asks again
    await clinic;
    await gate('bulk');
    expect(asked.map(({ team, weight }) => `${team}:${weight}`)).toEqual([
      'clinic:1',
      'marketing:1',
      'clinic:3',
      'default:1',
    ]);
  });

  it("never puts an interactive call in a team's line, and asks for it as interactive", async () => {
    // Bulk is refused until an interactive call was granted: the interactive one must not wait behind it.
    let interactiveGranted = false;
    const { store, asked } = fakeStore((ask) =>
      ask === 'interactive'
        ? ((interactiveGranted = true), { granted: true })
        : interactiveGranted
          ? { granted: true }
          : { granted: false, waitMs: 20 },
    );
    const gate = storeRequestGate(store, 'provider', 120);
    const bulk = gate('bulk');
    await gate('interactive');
    await bulk;
    expect(asked.map((a) => a.kind)).toContain('interactive');
    expect(asked.filter((a) => a.kind === 'bulk').every((a) => a.team === 'default')).toBe(true);
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
