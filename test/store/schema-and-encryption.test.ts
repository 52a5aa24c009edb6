/** Migrations (upgrade in place, concurrent openers, a newer database) and personal data at rest, on both dialects. */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, KeyRingError, parseKeyRing } from '../../src/crypto/keyring.js';
import { MIGRATIONS, type MessageStoreOptions, StoreSchemaError } from '../../src/store/index.js';
import { type DialectHarness, DIALECTS, harness, rawRows } from './dialects.js';

const NUMBER = '+447700900123';

describe.each(DIALECTS)('schema and encryption on %s', (dialect) => {
  let h: DialectHarness;
  beforeAll(async () => {
    h = await harness(dialect);
  });
  afterAll(() => h?.close());

  it('upgrades a database at an older version in place, keeping its data', async () => {
    const location = await h.freshLocation();
    const v1 = await h.open(location, { migrations: MIGRATIONS.slice(0, 1) });
    await v1.register('wf', [{ providerMessageId: 'm1', campaignKey: 'c' }]);
    // Version 1 has no rejected_events table yet.
    await expect(v1.recordRejected('r', {})).rejects.toThrow(/rejected_events/);
    await v1.close();
    expect(await rawRows(location, 'SELECT version FROM schema_migrations ORDER BY version')).toEqual([{ version: 1 }]);

    const v2 = await h.open(location);
    expect((await v2.message('m1'))?.waiters.map((w) => w.workflowId)).toEqual(['wf']);
    await v2.recordRejected('r', { a: 1 });
    expect((await v2.rejected({ limit: 1 })).rows[0]?.event).toEqual({ a: 1 });
    expect(await rawRows(location, 'SELECT version, name FROM schema_migrations ORDER BY version')).toEqual(
      MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
    );
  });

  it('applies each migration once when several processes open a new database at the same moment', async () => {
    const location = await h.freshLocation();
    const stores = await Promise.all([1, 2, 3, 4].map(() => h.open(location)));
    await stores[0]!.register('wf', [{ providerMessageId: 'm1' }]);
    expect(await stores[3]!.message('m1')).not.toBeNull();
    expect(await rawRows(location, 'SELECT version FROM schema_migrations ORDER BY version')).toEqual(
      MIGRATIONS.map((m) => ({ version: m.version })),
    );
  });

  it('refuses a database newer than the code, saying so', async () => {
    const location = await h.freshLocation();
    await (await h.open(location)).close();
    const older = h.open(location, { migrations: MIGRATIONS.slice(0, 1) });
    await expect(older).rejects.toThrow(StoreSchemaError);
    await expect(older).rejects.toThrow(/newer than this msgflow knows/);
  });

  describe('with a key ring', () => {
    const lookupKey = randomBytes(32);
    const oldRing = `old:${generateKey()}`;
    const encryption = (spec: string): MessageStoreOptions => ({
      encryption: { ring: parseKeyRing(spec), lookupKey },
    });

    it('stores numbers and rejected events encrypted, reads them back, and finds by number after a rotation', async () => {
      const location = await h.freshLocation();
      const before = await h.open(location, encryption(oldRing));
      await before.register('wf', [{ providerMessageId: 'm-old', number: NUMBER, campaignKey: 'c' }]);
      await before.recordRejected('bad status', { provider_message_id: 'x', mobile_number: NUMBER });

      const rows = await rawRows(location, 'SELECT * FROM messages');
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain(NUMBER.slice(1)); // not even without the +
      expect(rows[0]!.recipient).toMatch(/^v1\.old\./);
      expect(JSON.stringify(await rawRows(location, 'SELECT * FROM rejected_events'))).not.toContain(NUMBER.slice(1));
      expect((await before.report({ campaignKey: 'c', limit: 10 })).rows[0]?.number).toBe(NUMBER);
      expect(await before.messagesTo(NUMBER)).toEqual(['m-old']);
      await before.close();

      // Rotation: the new key first, the old one still present; the lookup key stays.
      const after = await h.open(location, encryption(`new:${generateKey()},${oldRing}`));
      await after.register('wf', [{ providerMessageId: 'm-new', number: NUMBER, campaignKey: 'c' }]);
      expect(
        (await after.report({ campaignKey: 'c', limit: 10 })).rows.map((r) => [r.providerMessageId, r.number]),
      ).toEqual([
        ['m-new', NUMBER],
        ['m-old', NUMBER],
      ]);
      expect((await after.rejected({ limit: 1 })).rows[0]?.event).toEqual({
        provider_message_id: 'x',
        mobile_number: NUMBER,
      });
      expect(await after.messagesTo(NUMBER)).toEqual(['m-new', 'm-old']);
      const sealed = await rawRows(location, "SELECT recipient FROM messages WHERE provider_message_id = 'm-new'");
      expect(sealed[0]!.recipient).toMatch(/^v1\.new\./);

      // Without the key ring, encrypted numbers cannot be read, and the error says why.
      const keyless = await h.open(location);
      await expect(keyless.message('m-old')).rejects.toThrow(KeyRingError);
      await expect(keyless.message('m-old')).rejects.toThrow(/MSGFLOW_ENCRYPTION_KEY/);
    });

    it('still reads and finds numbers stored in clear before encryption was configured', async () => {
      const location = await h.freshLocation();
      const clear = await h.open(location);
      await clear.register('wf', [{ providerMessageId: 'm-clear', number: NUMBER, campaignKey: 'c' }]);
      await clear.close();
      const encrypted = await h.open(location, encryption(oldRing));
      await encrypted.register('wf', [{ providerMessageId: 'm-sealed', number: NUMBER, campaignKey: 'c' }]);
      expect((await encrypted.report({ campaignKey: 'c', limit: 10 })).rows.map((r) => r.number)).toEqual([
        NUMBER,
        NUMBER,
      ]);
      expect(await encrypted.messagesTo(NUMBER)).toEqual(['m-clear', 'm-sealed']);
    });

    it('binds a sealed number to its message: a number copied onto another row does not decrypt', async () => {
      const location = await h.freshLocation();
      const store = await h.open(location, encryption(oldRing));
      await store.register('wf', [
        { providerMessageId: 'a', number: NUMBER },
        { providerMessageId: 'b', number: '+447700900999' },
      ]);
      await store.close();
      await rawWrite(
        location,
        "UPDATE messages SET recipient = (SELECT recipient FROM messages WHERE provider_message_id = 'a') WHERE provider_message_id = 'b'",
      );
      const reopened = await h.open(location, encryption(oldRing));
      expect((await reopened.message('a'))?.number).toBe(NUMBER);
      await expect(reopened.message('b')).rejects.toThrow();
    });

    if (dialect === 'sqlite')
      it('leaves no number in clear anywhere in the SQLite files', async () => {
        const location = await h.freshLocation();
        const store = await h.open(location, encryption(oldRing));
        const ids = Array.from({ length: 50 }, (_, i) => `m${i}`);
        await store.register(
          'wf',
          ids.map((id) => ({ providerMessageId: id, number: NUMBER, campaignKey: 'c' })),
        );
        await store.recordRejected('bad', { mobile_number: NUMBER });
        await store.close();
        const folder = dirname(location.file!);
        const files = readdirSync(folder).filter((f) => f.startsWith(location.file!.split('/').pop()!));
        expect(files.length).toBeGreaterThan(0);
        for (const file of files) expect(readFileSync(`${folder}/${file}`).includes(NUMBER.slice(1))).toBe(false);
        // The same check sees a clear number when there is one (so it can fail).
        const clear = await h.freshLocation();
        const plain = await h.open(clear);
        await plain.register('wf', [{ providerMessageId: 'p', number: NUMBER }]);
        await plain.close();
        expect(readFileSync(clear.file!).includes(NUMBER.slice(1))).toBe(true);
      });
  });
});

async function rawWrite(location: Pick<MessageStoreOptions, 'file' | 'url'>, sql: string): Promise<void> {
  if (location.url) {
    await rawRows(location, sql);
    return;
  }
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(location.file!);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}
