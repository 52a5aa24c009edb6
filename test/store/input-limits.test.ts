/**
 * The message store refuses bad input at its edge, with a StoreInputError naming what is wrong, before any
 * SQL runs: every text at its limit is taken and one character over is refused, as are empty texts, numbers
 * not in international form, page sizes outside 1–1000, cursors it did not issue and dates that are not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MessageStore, StoreInputError } from '../../src/store/index.js';
import { budgetSettings } from '../../src/store/index.js';
import { DIALECTS, type DialectHarness, harness } from './dialects.js';

const text = (length: number) => 'x'.repeat(length);

describe.each(DIALECTS)('input limits of the message store on %s', (dialect) => {
  let h: DialectHarness;
  let store: MessageStore;

  beforeAll(async () => {
    h = await harness(dialect);
    store = await h.open(await h.freshLocation());
  });
  afterAll(() => h?.close());

  /** `call` with a value at `max` characters succeeds; with one more, or none, it is refused naming `name`. */
  async function limited(name: string, max: number, call: (value: string) => Promise<unknown>) {
    await expect(call(text(max)), `${name} at ${max}`).resolves.not.toThrow();
    for (const value of [text(max + 1), '']) {
      const refusal = call(value);
      await expect(refusal, `${name} of ${value.length}`).rejects.toThrow(StoreInputError);
      await expect(call(value)).rejects.toThrow(`${name} must be a string of 1 to ${max} characters`);
    }
  }

  it('bounds every id and text a caller passes in', async () => {
    await limited('workflowId', 1000, (w) => store.register(w, [{ providerMessageId: 'm1' }]));
    await limited('providerMessageId', 200, (id) => store.register('wf', [{ providerMessageId: id }]));
    await limited('number', 50, (n) => store.register('wf', [{ providerMessageId: 'm2', number: n }]));
    await limited('campaignKey', 1000, (k) => store.register('wf', [{ providerMessageId: 'm3', campaignKey: k }]));
    await limited('traceParent', 100, (t) => store.register('wf', [{ providerMessageId: 'm3', traceParent: t }]));
    const event = { providerMessageId: 'm4', status: 'delivered', timestamp: 't' };
    await limited('status', 50, (status) => store.recordEvents([{ ...event, status }]));
    await limited('timestamp', 100, (timestamp) => store.recordEvents([{ ...event, timestamp }]));
    await limited('eventId', 1000, (eventId) => store.recordEvents([{ ...event, eventId }]));
    await limited('providerMessageId', 200, (id) => store.outcomes([id]));
    await limited('workflowId', 1000, (w) => store.release(w));
    await limited('providerMessageId', 200, (id) => store.release('wf', [id]));
    await limited('campaignKey', 1000, (k) => store.report({ campaignKey: k, limit: 1 }));
    await limited('status', 50, (status) => store.report({ campaignKey: 'c', status, limit: 1 }));
    const after = { recordedAt: 0, providerMessageId: '' };
    await limited('campaignKey', 1000, (k) => store.settled({ campaignKey: k, after, limit: 1 }));
    await limited('providerMessageId', 200, (id) => store.message(id));
    await limited('number', 50, (n) => store.messagesTo(n));
    await limited('reason', 10_000, (reason) => store.recordRejected(reason, {}));
    await limited('reason', 200, (reason) => store.suppress([{ number: '+2348012345678', reason }]));
    await limited('budget', 200, (name) => store.takeRequest(name, budgetSettings(120), 'bulk'));
  });

  it('takes numbers only in international form', async () => {
    for (const number of ['+1234567', '+123456789012345', '+2348099999999']) {
      await expect(store.suppress([{ number }]), number).resolves.toBe(1);
    }
    for (const number of ['2348012345678', '+0234801234567', '+123456', '+1234567890123456', '+234 801', '']) {
      await expect(store.suppress([{ number }]), number).rejects.toThrow(/international format/);
      await expect(store.suppressedAmong([number]), number).rejects.toThrow(/international format/);
    }
  });

  it('pages 1 to 1000 rows at a time', async () => {
    for (const limit of [1, 1000]) await expect(store.rejected({ limit })).resolves.toHaveProperty('rows');
    for (const limit of [0, 1001, 1.5, Number.NaN]) {
      await expect(store.rejected({ limit }), String(limit)).rejects.toThrow('limit must be an integer from 1 to 1000');
      await expect(store.report({ campaignKey: 'c', limit }), String(limit)).rejects.toThrow(/limit/);
      await expect(store.suppressions({ limit }), String(limit)).rejects.toThrow(/limit/);
    }
  });

  it('refuses cursors it did not issue', async () => {
    for (const after of ['not a cursor!', text(401), '']) {
      await expect(store.report({ campaignKey: 'c', after, limit: 1 }), after).rejects.toThrow('invalid cursor');
    }
    await expect(store.report({ campaignKey: 'c', after: text(400), limit: 1 })).resolves.toMatchObject({ rows: [] });
    // A well-formed cursor whose content is no row id of the rejected-events list.
    await expect(store.rejected({ limit: 1, before: Buffer.from('abc').toString('base64url') })).rejects.toThrow(
      'invalid cursor',
    );
  });

  it('takes only valid dates', async () => {
    await expect(store.purge({ olderThan: new Date(0) })).resolves.toEqual({
      messages: 0,
      rejectedEvents: 0,
      otpEvents: 0,
    });
    await expect(store.purge({ olderThan: new Date('nonsense') })).rejects.toThrow('olderThan must be a valid Date');
    await expect(store.purge({ olderThan: 0 as unknown as Date })).rejects.toThrow('olderThan must be a valid Date');
    await expect(
      store.purge({ olderThan: new Date(0), abandonWaitersRegisteredBefore: new Date(Number.NaN) }),
    ).rejects.toThrow('abandonWaitersRegisteredBefore must be a valid Date');
  });
});
