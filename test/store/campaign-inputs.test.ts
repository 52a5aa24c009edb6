/**
 * What a campaign's retry needs, kept in the store on SQLite and on a real PostgreSQL server: the input and
 * each recipient's fields (sealed at rest when a key ring is configured), and who a retry sends to: a final
 * state asked for, never a number the campaign delivered to, each once, a page at a time.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, parseKeyRing } from '../../src/crypto/keyring.js';
import { type MessageStore, type MessageStoreOptions, StoreInputError } from '../../src/store/index.js';
import { type DialectHarness, DIALECTS, harness, rawRows } from './dialects.js';

const ADA = '+2348030000021';
const BOLA = '+2348030000022';
const CHIDI = '+2348030000023';
const DAYO = '+2348030000024';
const EMEKA = '+2348030000025';
const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

/** Campaign `spring`: Ada failed, Bola undelivered, Chidi delivered, Dayo expired, Emeka rejected; Bola also got a later message that failed. */
async function springCampaign(store: MessageStore): Promise<void> {
  const sent = [
    ['m1', ADA, 'failed'],
    ['m2', BOLA, 'undelivered'],
    ['m3', CHIDI, 'delivered'],
    ['m4', DAYO, 'expired'],
    ['m5', EMEKA, 'rejected'],
    ['m6', CHIDI, 'failed'],
  ] as const;
  await store.register(
    'campaign:spring',
    sent.map(([providerMessageId, number]) => ({ providerMessageId, number, campaignKey: 'spring' })),
  );
  await store.register('campaign:other', [{ providerMessageId: 'o1', number: ADA, campaignKey: 'other' }]);
  await store.recordEvents([
    ...sent.map(([providerMessageId, , status], i) => ({ providerMessageId, status, timestamp: at(i) })),
    { providerMessageId: 'o1', status: 'failed' as const, timestamp: at(9) },
  ]);
}

describe.each(DIALECTS)('campaign inputs on %s', (dialect) => {
  let h: DialectHarness;
  beforeAll(async () => {
    h = await harness(dialect);
  });
  afterAll(() => h?.close());

  const encryption: MessageStoreOptions = {
    encryption: { ring: parseKeyRing(`k1:${generateKey()}`), lookupKey: randomBytes(32) },
  };

  it('keeps an input (a later start under the key replaces it), sealed at rest with a key ring', async () => {
    const location = await h.freshLocation();
    const store = await h.open(location, encryption);
    const input = { sender: 'ACME', message: 'Hi {name}, your payment is due', audience: { type: 'file', path: '/a' } };
    expect(await store.campaignInputs.input('spring')).toBeNull();
    await store.campaignInputs.keep('spring', { ...input, message: 'first' });
    await store.campaignInputs.keep('spring', input);
    expect(await store.campaignInputs.input('spring')).toEqual(input);
    const raw = await rawRows(location, 'SELECT input FROM campaign_inputs');
    expect(raw).toHaveLength(1);
    expect(String(raw[0]!.input)).toMatch(/^v1\.k1\./);
    expect(String(raw[0]!.input)).not.toContain('payment');
  });

  it('sends again to the failed states asked for, never to a number delivered to, with its fields', async () => {
    const location = await h.freshLocation();
    const store = await h.open(location, encryption);
    await springCampaign(store);
    await store.campaignInputs.keepRows('spring', [
      { number: ADA, fields: { name: 'Ada' } },
      { number: BOLA, fields: { name: 'Bola' } },
    ]);
    // A row kept already stays as it was (a chunk sent again after a crash).
    await store.campaignInputs.keepRows('spring', [{ number: ADA, fields: { name: 'Changed' } }]);
    const page = await store.campaignInputs.retryRecipients({
      campaignKey: 'spring',
      statuses: ['failed', 'undelivered', 'expired'],
      limit: 10,
    });
    expect(page).toEqual({
      rows: [
        { number: ADA, fields: { name: 'Ada' } },
        { number: BOLA, fields: { name: 'Bola' } },
        { number: DAYO, fields: null },
      ],
      next: null,
    });
    const rejected = await store.campaignInputs.retryRecipients({
      campaignKey: 'spring',
      statuses: ['rejected'],
      limit: 10,
    });
    expect(rejected.rows.map((r) => r.number)).toEqual([EMEKA]);
    const raw = await rawRows(location, 'SELECT fields FROM campaign_rows');
    expect(raw.map((r) => String(r.fields)).join()).not.toContain('Ada');
  });

  it('pages in a stable order, and refuses to send again to the delivered', async () => {
    const store = await h.open(await h.freshLocation());
    await springCampaign(store);
    const query = { campaignKey: 'spring', statuses: ['failed', 'undelivered', 'expired'] };
    const first = await store.campaignInputs.retryRecipients({ ...query, limit: 2 });
    expect(first.rows.map((r) => r.number)).toEqual([ADA, BOLA]);
    const second = await store.campaignInputs.retryRecipients({ ...query, limit: 2, after: first.next! });
    expect(second).toEqual({ rows: [{ number: DAYO, fields: null }], next: null });
    await expect(
      store.campaignInputs.retryRecipients({ ...query, statuses: ['failed', 'delivered'], limit: 2 }),
    ).rejects.toThrow(StoreInputError);
  });

  it('forgets a number erased, with its fields', async () => {
    const location = await h.freshLocation();
    const store = await h.open(location);
    await springCampaign(store);
    await store.campaignInputs.keepRows('spring', [
      { number: ADA, fields: { name: 'Ada' } },
      { number: BOLA, fields: { name: 'Bola' } },
    ]);
    await store.eraseNumber(ADA);
    expect(await rawRows(location, 'SELECT fields FROM campaign_rows')).toEqual([{ fields: '{"name":"Bola"}' }]);
    const page = await store.campaignInputs.retryRecipients({ campaignKey: 'spring', statuses: ['failed'], limit: 10 });
    expect(page.rows).toEqual([]);
  });

  it("lets retention take a campaign's input and rows once its messages are gone", async () => {
    const location = await h.freshLocation();
    const store = await h.open(location);
    await springCampaign(store);
    await store.campaignInputs.keep('spring', { sender: 'ACME' });
    await store.campaignInputs.keepRows('spring', [{ number: ADA, fields: { name: 'Ada' } }]);
    await store.release('campaign:spring');
    await store.release('campaign:other');
    // Kept after the cutoff: stays (a campaign that just started has no messages yet).
    await store.purge({ olderThan: new Date(Date.now() - 60_000) });
    expect(await store.campaignInputs.input('spring')).toEqual({ sender: 'ACME' });
    await store.purge({ olderThan: new Date(Date.now() + 60_000) });
    expect(await store.campaignInputs.input('spring')).toBeNull();
    expect(await rawRows(location, 'SELECT campaign_key FROM campaign_rows')).toEqual([]);
  });
});
