/**
 * The sandbox's idempotency keys, unit by unit (test/sandbox/idempotency.test.ts checks them over HTTP): the
 * request fingerprint, and a key's life — claimed, in progress, done and replayed, released after a failure,
 * expired after 24 hours, recovered at startup — on a real SQLite database.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../src/sandbox/db.js';
import { IDEMPOTENCY_TTL_MS, IdempotencyStore, requestHash } from '../../src/sandbox/idempotency.js';

describe('requestHash', () => {
  it('ignores key order and undefined fields, at every depth', () => {
    expect(requestHash('sms', { b: 1, a: { d: 2, c: 3 } })).toBe(requestHash('sms', { a: { c: 3, d: 2 }, b: 1 }));
    expect(requestHash('sms', { a: 1, skipped: undefined })).toBe(requestHash('sms', { a: 1 }));
  });

  it('tells apart operations, values, list order and null from a missing body', () => {
    const base = requestHash('sms', { to: ['1', '2'] });
    expect(requestHash('otp', { to: ['1', '2'] })).not.toBe(base);
    expect(requestHash('sms', { to: ['2', '1'] })).not.toBe(base);
    expect(requestHash('sms', { to: ['1', '2', '3'] })).not.toBe(base);
    expect(requestHash('sms', { to: '1,2' })).not.toBe(base);
    expect(requestHash('sms', { too: ['1', '2'] })).not.toBe(base);
    expect(requestHash('sms', undefined)).toBe(requestHash('sms', null));
    expect(requestHash('sms', {})).not.toBe(requestHash('sms', null));
    expect(requestHash('sms', [])).not.toBe(requestHash('sms', {}));
  });

  it('keeps the operation apart from the body, and list items apart from each other', () => {
    expect(requestHash('op1', 2)).not.toBe(requestHash('op', 12));
    expect(requestHash('sms', [1, 23])).not.toBe(requestHash('sms', [12, 3]));
  });

  it('gives the same fingerprint to every order of the same keys', () => {
    const orders = [
      { a: 1, b: 2, c: 3, d: 4 },
      { d: 4, c: 3, b: 2, a: 1 },
      { c: 3, a: 1, d: 4, b: 2 },
      { b: 2, d: 4, a: 1, c: 3 },
    ];
    expect(new Set(orders.map((body) => requestHash('sms', body))).size).toBe(1);
  });
});

describe('IdempotencyStore', () => {
  let db: Db;
  let keys: IdempotencyStore;
  const now = 1_700_000_000_000;
  const hash = requestHash('sms', { to: ['1'] });
  const done = { status: 202, body: { campaign_id: 'cmp_1' } };

  beforeEach(async () => {
    db = await openDatabase(':memory:');
    keys = new IdempotencyStore(db);
  });
  afterEach(() => db.close());

  const stateOf = (key: string) =>
    db.prepare('SELECT state FROM idempotency_keys WHERE account_id = ? AND key = ?').get('acc', key) as
      { state: string } | undefined;

  it('claims a new key, refuses it while in progress, replays it once done', () => {
    expect(keys.claim('acc', 'k', hash, now)).toEqual({ kind: 'claimed' });
    expect(() => keys.claim('acc', 'k', hash, now + 1)).toThrow(
      expect.objectContaining({
        code: 'idempotency_in_progress',
        status: 409,
        message: 'A request with this Idempotency-Key is still in progress; retry shortly',
      }),
    );
    expect(() => keys.claim('acc', 'k', requestHash('sms', { to: ['2'] }), now + 1)).toThrow(
      'This Idempotency-Key was already used with a different request; use a new key for a new request',
    );
    keys.complete('acc', 'k', done);
    expect(keys.claim('acc', 'k', hash, now + 2)).toEqual({ kind: 'replay', response: done });
  });

  it('refuses the same key with another request, done or not', () => {
    keys.claim('acc', 'k', hash, now);
    const other = requestHash('sms', { to: ['2'] });
    expect(() => keys.claim('acc', 'k', other, now)).toThrow(
      expect.objectContaining({ code: 'idempotency_key_reused' }),
    );
    keys.complete('acc', 'k', done);
    expect(() => keys.claim('acc', 'k', other, now)).toThrow(
      expect.objectContaining({ code: 'idempotency_key_reused' }),
    );
  });

  it('keeps keys per account', () => {
    keys.claim('acc', 'k', hash, now);
    expect(keys.claim('other', 'k', requestHash('x', 1), now)).toEqual({ kind: 'claimed' });
  });

  it('lets a key be claimed afresh, for any request, once its 24 hours are over', () => {
    keys.claim('acc', 'k', hash, now);
    keys.complete('acc', 'k', done);
    const expiry = now + IDEMPOTENCY_TTL_MS;
    expect(keys.claim('acc', 'k', hash, expiry - 1)).toMatchObject({ kind: 'replay' });
    expect(keys.claim('acc', 'k', requestHash('sms', { to: ['2'] }), expiry)).toEqual({ kind: 'claimed' });
    // The fresh claim is in progress again, with a new expiry.
    expect(() => keys.claim('acc', 'k', requestHash('sms', { to: ['2'] }), expiry + 1)).toThrow(
      expect.objectContaining({ code: 'idempotency_in_progress' }),
    );
    expect(stateOf('k')).toEqual({ state: 'in_progress' });
  });

  it('releases a claim in progress after a failure, never a done key', () => {
    keys.claim('acc', 'failed', hash, now);
    keys.release('acc', 'failed');
    expect(keys.claim('acc', 'failed', requestHash('sms', { fixed: true }), now)).toEqual({ kind: 'claimed' });
    keys.claim('acc', 'k', hash, now);
    keys.complete('acc', 'k', done);
    keys.release('acc', 'k');
    expect(keys.claim('acc', 'k', hash, now)).toEqual({ kind: 'replay', response: done });
  });

  it('at startup drops claims left in progress and expired keys; purging drops only expired keys', () => {
    keys.claim('acc', 'crashed', hash, now);
    keys.claim('acc', 'kept', hash, now);
    keys.complete('acc', 'kept', done);
    keys.claim('acc', 'old', hash, now - IDEMPOTENCY_TTL_MS);
    keys.complete('acc', 'old', done);
    keys.recover(now);
    expect([stateOf('crashed'), stateOf('kept'), stateOf('old')]).toEqual([undefined, { state: 'done' }, undefined]);

    keys.claim('acc', 'running', hash, now);
    keys.purgeExpired(now + IDEMPOTENCY_TTL_MS - 1);
    expect([stateOf('running'), stateOf('kept')]).toEqual([{ state: 'in_progress' }, { state: 'done' }]);
    keys.purgeExpired(now + IDEMPOTENCY_TTL_MS);
    expect([stateOf('running'), stateOf('kept')]).toEqual([undefined, undefined]);
  });
});
