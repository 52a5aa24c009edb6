/**
 * The suppression list and erasing one number, on SQLite and on a real PostgreSQL server: lookups by keyed
 * hash that survive a key rotation, numbers sealed at rest, and an erasure that keeps the opt-out.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, parseKeyRing } from '../../src/crypto/keyring.js';
import { type MessageStoreOptions, MIGRATIONS, StoreInputError } from '../../src/store/index.js';
import { type DialectHarness, DIALECTS, harness, rawRows } from './dialects.js';

const ADA = '+2348030000021';
const BOLA = '+2348030000022';
const CHIDI = '+2348030000023';

describe.each(DIALECTS)('suppression list on %s', (dialect) => {
  let h: DialectHarness;
  beforeAll(async () => {
    h = await harness(dialect);
  });
  afterAll(() => h?.close());

  const lookupKey = randomBytes(32);
  const oldRing = `old:${generateKey()}`;
  const encryption = (spec: string): MessageStoreOptions => ({ encryption: { ring: parseKeyRing(spec), lookupKey } });

  it('adds once, screens, lists oldest first in pages, and removes', async () => {
    const store = await h.open(await h.freshLocation());
    expect(await store.suppress([{ number: ADA, reason: 'replied STOP' }, { number: BOLA }, { number: ADA }])).toBe(2);
    expect(await store.suppress([{ number: ADA }, { number: CHIDI }])).toBe(1);
    expect(await store.suppressedAmong([CHIDI, '+2348030000099', ADA, ADA])).toEqual([CHIDI, ADA]);

    const first = await store.suppressions({ limit: 2 });
    expect(first.rows).toHaveLength(2);
    const second = await store.suppressions({ limit: 2, after: first.next! });
    expect(second.next).toBeNull();
    const all = [...first.rows, ...second.rows];
    expect(all.map((r) => r.number).sort()).toEqual([ADA, BOLA, CHIDI]);
    expect(all.find((r) => r.number === ADA)?.reason).toBe('replied STOP');
    expect(all.at(-1)?.number).toBe(CHIDI); // added last

    expect(await store.unsuppress([ADA, '+2348030000099'])).toBe(1);
    expect(await store.suppressedAmong([ADA, BOLA])).toEqual([BOLA]);
  });

  it('refuses numbers that are not +E.164 and bad cursors, with a clear error', async () => {
    const store = await h.open(await h.freshLocation());
    await expect(store.suppress([{ number: '2348030000021' }])).rejects.toThrow(StoreInputError);
    await expect(store.suppressedAmong(['not a number'])).rejects.toThrow(/leading \+/);
    // Erasing is matched as a pattern too: a number that is not one must never reach it.
    await expect(store.eraseNumber('+.+')).rejects.toThrow(StoreInputError);
    await expect(store.suppressions({ limit: 10, after: 'bm9wZQ' })).rejects.toThrow(/invalid cursor/);
    await expect(store.suppress([{ number: ADA, reason: 'x'.repeat(201) }])).rejects.toThrow(/reason/);
  });

  it('upgrades a store of the previous schema with an empty list', async () => {
    const location = await h.freshLocation();
    const older = await h.open(location, { migrations: MIGRATIONS.slice(0, 3) });
    await older.register('wf', [{ providerMessageId: 'm1', number: ADA }]);
    await older.close();
    const store = await h.open(location);
    expect((await store.suppressions({ limit: 10 })).rows).toEqual([]);
    expect(await store.suppress([{ number: ADA }])).toBe(1);
  });

  it('keeps numbers sealed at rest and finds them by keyed hash after the key ring rotates', async () => {
    const location = await h.freshLocation();
    const before = await h.open(location, encryption(oldRing));
    await before.suppress([{ number: ADA }]);
    const raw = await rawRows(location, 'SELECT * FROM suppressions');
    expect(JSON.stringify(raw)).not.toContain(ADA.slice(1));
    expect(raw[0]!.lookup).toMatch(/^h1\./);
    expect(raw[0]!.number).toMatch(/^v1\.old\./);
    await before.close();

    const after = await h.open(location, encryption(`new:${generateKey()},${oldRing}`));
    expect(await after.suppressedAmong([ADA, BOLA])).toEqual([ADA]);
    expect((await after.suppressions({ limit: 10 })).rows.map((r) => r.number)).toEqual([ADA]);
    expect(await after.suppress([{ number: ADA }])).toBe(0);
  });

  it('finds opt-outs listed in clear before encryption was configured, and does not list them twice', async () => {
    const location = await h.freshLocation();
    const clear = await h.open(location);
    await clear.suppress([{ number: ADA }]);
    await clear.close();
    const encrypted = await h.open(location, encryption(oldRing));
    expect(await encrypted.suppressedAmong([ADA])).toEqual([ADA]);
    expect(await encrypted.suppress([{ number: ADA }])).toBe(0);
    expect(await encrypted.unsuppress([ADA])).toBe(1);
    expect(await encrypted.suppressedAmong([ADA])).toEqual([]);
  });

  it('erases a number from reports and rejected events; the opt-out stays as a keyed hash', async () => {
    const location = await h.freshLocation();
    const store = await h.open(location, encryption(oldRing));
    await store.register('wf', [
      { providerMessageId: 'm-ada', number: ADA, campaignKey: 'c' },
      { providerMessageId: 'm-bola', number: BOLA, campaignKey: 'c' },
    ]);
    await store.recordEvents([{ providerMessageId: 'm-ada', status: 'delivered', timestamp: 't' }]);
    await store.recordRejected('bad status', { mobile_number: ADA, status: 'odd' });
    await store.recordRejected('bad status', { mobile_number: `${ADA}1`, status: 'odd' }); // another number
    await store.recordRejected('bad status', { mobile_number: BOLA });
    await store.suppress([{ number: ADA, reason: 'replied STOP' }]);

    expect(await store.eraseNumber(ADA)).toEqual({
      messages: 1,
      rejectedEvents: 1,
      suppressed: true,
      suppressionKeptAs: 'keyed-hash',
    });
    const report = (await store.report({ campaignKey: 'c', limit: 10 })).rows;
    expect(report.map((r) => [r.providerMessageId, r.number, r.status])).toEqual([
      ['m-ada', null, 'delivered'],
      ['m-bola', BOLA, null],
    ]);
    expect(await store.messagesTo(ADA)).toEqual([]);
    expect((await store.rejected({ limit: 10 })).rows.map((r) => r.event)).toEqual([
      { mobile_number: BOLA },
      { mobile_number: `${ADA}1`, status: 'odd' },
    ]);
    // Still never sent to; listed without a number.
    expect(await store.suppressedAmong([ADA])).toEqual([ADA]);
    expect((await store.suppressions({ limit: 10 })).rows).toEqual([
      expect.objectContaining({ number: null, reason: 'replied STOP' }),
    ]);
    const raw = await rawRows(location, 'SELECT * FROM suppressions');
    expect(raw).toEqual([expect.objectContaining({ number: null, lookup: expect.stringMatching(/^h1\./) })]);
  });

  it('erasing without a key keeps the opt-out under the number itself, and says so', async () => {
    const location = await h.freshLocation();
    const store = await h.open(location);
    await store.register('wf', [{ providerMessageId: 'm-ada', number: ADA }]);
    await store.suppress([{ number: ADA }]);
    expect(await store.eraseNumber(ADA)).toEqual({
      messages: 1,
      rejectedEvents: 0,
      suppressed: true,
      suppressionKeptAs: 'number',
    });
    expect((await store.message('m-ada'))?.number).toBeNull();
    expect(await store.suppressedAmong([ADA])).toEqual([ADA]);
    expect(await store.eraseNumber(BOLA)).toMatchObject({ messages: 0, suppressed: false });
  });

  it('an opt-out listed in clear moves to its keyed hash when erased with a key configured', async () => {
    const location = await h.freshLocation();
    const clear = await h.open(location);
    await clear.suppress([{ number: ADA }]);
    await clear.close();
    const encrypted = await h.open(location, encryption(oldRing));
    expect(await encrypted.eraseNumber(ADA)).toMatchObject({ suppressed: true, suppressionKeptAs: 'keyed-hash' });
    expect(JSON.stringify(await rawRows(location, 'SELECT * FROM suppressions'))).not.toContain(ADA.slice(1));
    expect(await encrypted.suppressedAmong([ADA])).toEqual([ADA]);
  });
});
