/**
 * The store's paged reads walk every row exactly once, whatever the page size: campaign reports, rejected
 * events (newest first) and the suppression list (ties in time broken by lookup). A full last page says there
 * is no next one; a cursor the store did not issue is refused; and the edges of its inputs (nothing to look up,
 * entries missing, numbers not in +E.164) answer plainly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MessageStore, type Page, StoreInputError } from '../../src/store/index.js';
import { DIALECTS, type DialectHarness, harness } from './dialects.js';

/** Every row of a paged read, following `next` from the first page. */
async function walk<T>(read: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const rows: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const page = await read(cursor);
    rows.push(...page.rows);
    if (page.next === null) return rows;
    cursor = page.next;
  }
  throw new Error('more than 50 pages');
}

const cursorOf = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

describe.each(DIALECTS)('paged reads of the message store on %s', (dialect) => {
  let h: DialectHarness;
  let store: MessageStore;
  const numbers = ['+2348031000001', '+2348031000002', '+2348031000003', '+2348031000004', '+2348031000005'];

  beforeAll(async () => {
    h = await harness(dialect);
    store = await h.open(await h.freshLocation());
    await store.register(
      'wf',
      numbers.map((number, i) => ({ providerMessageId: `m${i + 1}`, number, campaignKey: 'c1' })),
    );
    for (let i = 1; i <= 5; i++) await store.recordRejected(`reason ${i}`, { n: i });
    // One call, one time: the list's order among them is by lookup alone.
    await store.suppress(numbers.map((number) => ({ number })));
  });
  afterAll(() => h?.close());

  it('walks a campaign report page by page, each row once', async () => {
    for (const limit of [1, 2, 3, 5, 6]) {
      const rows = await walk((after) => store.report({ campaignKey: 'c1', limit, after }));
      expect(
        rows.map((r) => r.providerMessageId),
        `limit ${limit}`,
      ).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    }
    expect((await store.report({ campaignKey: 'c1', limit: 5 })).next).toBeNull();
  });

  it('walks rejected events newest first, each once', async () => {
    for (const limit of [1, 2, 3, 5, 6]) {
      const rows = await walk((before) => store.rejected({ limit, before }));
      expect(
        rows.map((r) => r.reason),
        `limit ${limit}`,
      ).toEqual([5, 4, 3, 2, 1].map((i) => `reason ${i}`));
    }
    expect((await store.rejected({ limit: 5 })).next).toBeNull();
  });

  it('walks the suppression list, breaking ties in time by lookup', async () => {
    for (const limit of [1, 2, 3, 5, 6]) {
      const rows = await walk((after) => store.suppressions({ limit, after }));
      expect(rows.map((r) => r.number).sort(), `limit ${limit}`).toEqual(numbers);
      expect(rows, `limit ${limit}`).toHaveLength(5);
    }
    expect((await store.suppressions({ limit: 5 })).next).toBeNull();
  });

  it('refuses suppression cursors it did not issue', async () => {
    for (const forged of ['no-separator', ':lookup', 'soon:lookup']) {
      await expect(store.suppressions({ limit: 1, after: cursorOf(forged) }), forged).rejects.toThrow(StoreInputError);
    }
  });

  it('answers empty questions plainly and refuses entries that are missing or not +E.164', async () => {
    expect(await store.register('wf', [])).toEqual([]);
    expect(await store.recordEvents([])).toEqual([]);
    expect(await store.outcomes([])).toEqual([]);
    expect(await store.suppress([])).toBe(0);
    expect(await store.suppressedAmong([])).toEqual([]);
    expect(await store.unsuppress([])).toBe(0);
    await expect(store.unsuppress(['2348031000001'])).rejects.toThrow(StoreInputError);
    await expect(store.suppressedAmong(['x+2348031000001'])).rejects.toThrow(StoreInputError);
    await expect(store.register('wf', [undefined as never])).rejects.toThrow(StoreInputError);
    await expect(store.recordEvents([undefined as never])).rejects.toThrow(StoreInputError);
    await expect(store.suppress([undefined as never])).rejects.toThrow(StoreInputError);
  });

  it('erases a number from rejected events past the first thousand, counting each once', async () => {
    const big = await h.open(await h.freshLocation());
    for (let i = 0; i < 1_100; i++) {
      const mention = i === 10 || i === 1_050 ? ' from +2348031000009' : '';
      await big.recordRejected('bad', { n: i, note: `event ${i}${mention}` });
    }
    expect((await big.eraseNumber('+2348031000009')).rejectedEvents).toBe(2);
    const left = await walk((before) => big.rejected({ limit: 1000, before }));
    expect(left).toHaveLength(1_098);
  });
});
