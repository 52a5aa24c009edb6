/**
 * Final states asked of the provider, on SQLite and a real PostgreSQL server: recorded with their source,
 * the asking workflow told in the same transaction (the relay's untold reads never return it), the first
 * final state standing whichever way it came, and a voice call's state kept with its number sealed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { generateKey, parseKeyRing } from '../../src/crypto/keyring.js';
import { type MessageStore, MIGRATIONS } from '../../src/store/index.js';
import { type DialectHarness, DIALECTS, harness, rawRows } from './dialects.js';

const WHEN = '2026-01-01T00:00:00Z';
const LATER = '2026-01-01T00:01:00Z';
const event = (id: string, status: string, timestamp = WHEN) => ({ providerMessageId: id, status, timestamp });
const claimBy = (owner: string) => ({ owner, leaseMs: 10_000, minIntervalMs: 0, maxOutcomes: 100 });

describe.each(DIALECTS)('final states from the provider on %s', (dialect) => {
  let h: DialectHarness;
  let store: MessageStore;

  beforeAll(async () => {
    h = await harness(dialect);
  });
  afterAll(() => h?.close());

  async function fresh(): Promise<MessageStore> {
    store = await h.open(await h.freshLocation());
    return store;
  }

  it('records the answer with source provider and tells the asking workflow at once: the relay never sees it', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1', number: '+2348012345678', campaignKey: 'c1' }]);
    const stands = await store.recordProviderFinal({
      providerMessageId: 'm1',
      status: 'undelivered',
      timestamp: WHEN,
      workflowId: 'wf-a',
    });
    expect(stands).toEqual({
      providerMessageId: 'm1',
      status: 'undelivered',
      timestamp: WHEN,
      eventId: null,
      source: 'provider',
    });
    expect(await store.outbox.backlog()).toEqual({ untold: 0, oldestUntoldAt: null, refusedWorkflows: 0 });
    expect((await store.outbox.untold({ limit: 10 })).workflows).toEqual([]);
    expect((await store.outbox.claim(['wf-a'], claimBy('relay-1'))).outcomes).toEqual([]);
    // Reports, the outcome feed and the message lookup see it, with its source.
    const report = await store.report({ campaignKey: 'c1', limit: 10 });
    expect(report.rows).toEqual([
      {
        providerMessageId: 'm1',
        number: '+2348012345678',
        status: 'undelivered',
        final: true,
        timestamp: WHEN,
        source: 'provider',
      },
    ]);
    const feed = await store.settled({ campaignKey: 'c1', after: { recordedAt: 0, providerMessageId: '' }, limit: 10 });
    expect(feed.map((r) => [r.providerMessageId, r.status, r.source])).toEqual([['m1', 'undelivered', 'provider']]);
    expect((await store.message('m1'))?.final?.source).toBe('provider');
    expect(await store.outcomes(['m1'])).toEqual([
      { providerMessageId: 'm1', status: 'undelivered', timestamp: WHEN, eventId: null, source: 'provider' },
    ]);
    // A webhook's final state after it changes nothing and is not told to the workflow that has its answer.
    await store.recordEvents([{ ...event('m1', 'delivered', LATER), eventId: 'evt-1' }]);
    expect((await store.message('m1'))?.final).toMatchObject({ status: 'undelivered', source: 'provider' });
    expect(await store.outbox.backlog()).toEqual({ untold: 0, oldestUntoldAt: null, refusedWorkflows: 0 });
  });

  it('the first final state stands: a webhook recorded first is kept, returned, and told to the asker', async () => {
    const location = await h.freshLocation();
    store = await h.open(location);
    await store.register('wf-a', [{ providerMessageId: 'm1' }]);
    await store.recordEvents([{ ...event('m1', 'delivered'), eventId: 'evt-1' }]);
    expect(await rawRows(location, 'SELECT final_source FROM messages')).toEqual([{ final_source: 'webhook' }]);
    expect((await store.outbox.backlog()).untold).toBe(1);
    const stands = await store.recordProviderFinal({
      providerMessageId: 'm1',
      status: 'expired',
      timestamp: LATER,
      workflowId: 'wf-a',
    });
    expect(stands).toEqual({
      providerMessageId: 'm1',
      status: 'delivered',
      timestamp: WHEN,
      eventId: 'evt-1',
      source: 'webhook',
    });
    // The asker acts on the answer it got: the relay does not tell it the same outcome again.
    expect((await store.outbox.backlog()).untold).toBe(0);
    // Asked again (an activity's retry): the same answer, nothing else changes.
    expect(
      await store.recordProviderFinal({
        providerMessageId: 'm1',
        status: 'expired',
        timestamp: LATER,
        workflowId: 'wf-a',
      }),
    ).toEqual(stands);
  });

  it('other workflows waiting for the message are left for the relay to tell', async () => {
    await fresh();
    await store.register('wf-a', [{ providerMessageId: 'm1' }]);
    await store.register('wf-b', [{ providerMessageId: 'm1' }]);
    await store.recordProviderFinal({ providerMessageId: 'm1', status: 'failed', timestamp: WHEN, workflowId: 'wf-a' });
    expect((await store.outbox.untold({ limit: 10 })).workflows.map((w) => w.workflowId)).toEqual(['wf-b']);
    const claimed = await store.outbox.claim(['wf-a', 'wf-b'], claimBy('relay-1'));
    expect(claimed.outcomes).toEqual([
      {
        workflowId: 'wf-b',
        outcomes: [{ providerMessageId: 'm1', status: 'failed', timestamp: WHEN, eventId: null, source: 'provider' }],
        refusals: 0,
      },
    ]);
  });

  it("a voice call's final state is kept under its id, its number sealed at rest and found by lookup", async () => {
    const location = await h.freshLocation();
    const ring = parseKeyRing(`k1:${generateKey()}`);
    store = await h.open(location, { encryption: { ring, lookupKey: randomBytes(32) } });
    const stands = await store.recordProviderFinal({
      providerMessageId: 'call_1',
      status: 'no_answer',
      timestamp: WHEN,
      number: '+2348012345678',
    });
    expect(stands).toMatchObject({ status: 'no_answer', source: 'provider' });
    const found = await store.message('call_1');
    expect(found).toMatchObject({ number: '+2348012345678', final: { status: 'no_answer', source: 'provider' } });
    expect(await store.messagesTo('+2348012345678')).toEqual(['call_1']);
    expect(JSON.stringify(await rawRows(location, 'SELECT * FROM messages'))).not.toContain('2348012345678');
    // Not a message outcome: nothing for the SMS outcome paths.
    expect(await store.outcomes(['call_1'])).toEqual([]);
    // Recorded twice (a retried poll): one row, the first state.
    await store.recordProviderFinal({ providerMessageId: 'call_1', status: 'completed', timestamp: LATER });
    expect((await store.message('call_1'))?.final?.status).toBe('no_answer');
  });

  it('upgrading keeps the final states recorded before the column existed, as webhook ones, and OTP sends get a channel', async () => {
    const location = await h.freshLocation();
    // A database at version 9 holding a webhook's final state and a message not final yet (written as SQL:
    // this code's statements need the new column).
    const rows = `INSERT INTO messages (provider_message_id, final_status, final_timestamp, campaign_key, first_seen_at, last_seen_at)
      VALUES ('m1', 'delivered', '${WHEN}', 'c', 1, 1), ('m2', NULL, NULL, 'c', 1, 1);
      INSERT INTO otp_events (event_key, kind, session, at) VALUES ('s/send-1', 'send', 's', 1), ('s/voice', 'send', 's', 2),
        ('verify:s', 'verify', 's', 3);`;
    const v9 = { version: 9, name: 'test data', sqlite: rows, postgres: rows };
    const before = await h.open(location, { migrations: [...MIGRATIONS.filter((m) => m.version < 9), v9] });
    await before.close();
    store = await h.open(location);
    expect(
      (await store.report({ campaignKey: 'c', limit: 10 })).rows.map((r) => [r.providerMessageId, r.source]),
    ).toEqual([
      ['m1', 'webhook'],
      ['m2', null],
    ]);
    expect(
      await rawRows(location, 'SELECT provider_message_id, final_source FROM messages ORDER BY provider_message_id'),
    ).toEqual([
      { provider_message_id: 'm1', final_source: 'webhook' },
      { provider_message_id: 'm2', final_source: null },
    ]);
    // Earlier OTP sends get their channel from their key (a call's ends in /voice); a verification has none.
    expect(await rawRows(location, 'SELECT event_key, channel FROM otp_events ORDER BY at')).toEqual([
      { event_key: 's/send-1', channel: 'sms' },
      { event_key: 's/voice', channel: 'voice' },
      { event_key: 'verify:s', channel: null },
    ]);
  });

  it('refuses a state that is not final, and bad input, with a clear error and no write', async () => {
    await fresh();
    await expect(
      store.recordProviderFinal({ providerMessageId: 'm1', status: 'sent', timestamp: WHEN }),
    ).rejects.toThrow(/not a final state/);
    await expect(
      store.recordProviderFinal({ providerMessageId: '', status: 'failed', timestamp: WHEN }),
    ).rejects.toThrow(/providerMessageId/);
    expect(await store.message('m1')).toBeNull();
  });
});
