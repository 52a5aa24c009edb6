/**
 * The sandbox's pagination cursors and rate-limit windows, unit by unit (the HTTP suites check them through
 * the API): a cursor works only unaltered, for the account and list it was issued for; a window counts up
 * to its limit, then refuses until it ends.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../src/sandbox/cursor.js';
import { type Db, openDatabase, persistentSetting } from '../../src/sandbox/db.js';
import { rateLimited, RateLimiter } from '../../src/sandbox/http/rate-limit.js';

describe('CursorCodec', () => {
  let db: Db;
  let codec: CursorCodec;
  beforeAll(async () => {
    db = await openDatabase(':memory:');
    codec = new CursorCodec(db);
  });
  afterAll(() => db.close());

  /** A cursor over any payload, signed with the database's key: what a forger with the key could make. */
  function signed(payload: string): string {
    const key = Buffer.from(
      persistentSetting(db, 'cursor_secret', () => 'unused'),
      'base64',
    );
    const encoded = Buffer.from(payload).toString('base64url');
    return `${encoded}.${createHmac('sha256', key).update(encoded).digest('base64url')}`;
  }

  const refusal = {
    code: 'invalid_cursor',
    message: 'The cursor is not valid here; pass next_cursor back unchanged, with the same filters',
  };

  it('gives back the seq it was made with, for its account and list', () => {
    expect(codec.decode(codec.encode('acc_1', 'messages', 42), 'acc_1', 'messages')).toBe(42);
    expect(
      codec.decode(codec.encode('acc_1', 'messages?status=delivered', 0), 'acc_1', 'messages?status=delivered'),
    ).toBe(0);
  });

  it('keeps its key in the database, so cursors outlive the codec', () => {
    expect(new CursorCodec(db).decode(codec.encode('acc_1', 'messages', 7), 'acc_1', 'messages')).toBe(7);
  });

  it('refuses another account, another list or filter, and any alteration', () => {
    const cursor = codec.encode('acc_1', 'messages', 42);
    const [payload, signature] = cursor.split('.') as [string, string];
    const flipped = (text: string) => `${text.slice(0, -2)}${text.at(-2) === 'A' ? 'B' : 'A'}${text.at(-1)}`;
    for (const [given, account, list] of [
      [cursor, 'acc_2', 'messages'],
      [cursor, 'acc_1', 'messages?status=delivered'],
      [`${flipped(payload)}.${signature}`, 'acc_1', 'messages'],
      [`${payload}.${flipped(signature)}`, 'acc_1', 'messages'],
      [`${payload}.${signature.slice(0, -4)}`, 'acc_1', 'messages'],
      [`${payload}.${signature}.extra`, 'acc_1', 'messages'],
      [payload, 'acc_1', 'messages'],
      [`.${signature}`, 'acc_1', 'messages'],
      ['', 'acc_1', 'messages'],
    ] as const) {
      expect(() => codec.decode(given, account, list), given).toThrow(expect.objectContaining(refusal));
    }
  });

  it('refuses a signed payload that is not a cursor, or whose seq is not a safe integer', () => {
    expect(() => codec.decode(signed('not json'), 'acc_1', 'messages')).toThrow(expect.objectContaining(refusal));
    for (const s of [1.5, '4', null, 2 ** 53]) {
      const cursor = signed(JSON.stringify({ a: 'acc_1', l: 'messages', s }));
      expect(() => codec.decode(cursor, 'acc_1', 'messages'), String(s)).toThrow(expect.objectContaining(refusal));
    }
    expect(codec.decode(signed(JSON.stringify({ a: 'acc_1', l: 'messages', s: 9 })), 'acc_1', 'messages')).toBe(9);
  });
});

describe('RateLimiter', () => {
  const MINUTE = 60_000;

  it('allows `limit` hits in a window, counting down what remains, then refuses until the window ends', () => {
    const limiter = new RateLimiter();
    const t0 = 1_000_000;
    expect(limiter.hit('tok', 2, t0)).toEqual({ limit: 2, remaining: 1, resetAt: t0 + MINUTE, allowed: true });
    expect(limiter.hit('tok', 2, t0 + 10)).toEqual({ limit: 2, remaining: 0, resetAt: t0 + MINUTE, allowed: true });
    expect(limiter.hit('tok', 2, t0 + MINUTE - 1)).toEqual({
      limit: 2,
      remaining: 0,
      resetAt: t0 + MINUTE,
      allowed: false,
    });
    expect(limiter.hit('tok', 2, t0 + MINUTE)).toEqual({
      limit: 2,
      remaining: 1,
      resetAt: t0 + 2 * MINUTE,
      allowed: true,
    });
  });

  it('keeps a window per key, and starts a new one if the clock goes back', () => {
    const limiter = new RateLimiter();
    expect(limiter.hit('a', 1, 5_000).allowed).toBe(true);
    expect(limiter.hit('b', 1, 5_000).allowed).toBe(true);
    expect(limiter.hit('a', 1, 5_001).allowed).toBe(false);
    expect(limiter.hit('a', 1, 4_999)).toMatchObject({ allowed: true, resetAt: 4_999 + MINUTE });
  });

  it('forgets ended windows only', () => {
    const limiter = new RateLimiter();
    limiter.hit('old', 1, 0);
    limiter.hit('new', 1, MINUTE / 2);
    limiter.prune(MINUTE - 1);
    expect(limiter.size).toBe(2);
    limiter.prune(MINUTE);
    expect(limiter.size).toBe(1);
    // A pruned key starts afresh; a kept one still counts its hit.
    expect(limiter.hit('old', 1, MINUTE).allowed).toBe(true);
    expect(limiter.hit('new', 1, MINUTE).allowed).toBe(false);
  });

  it('tells when to retry, in whole seconds and at least one', () => {
    const state = { limit: 5, remaining: 0, resetAt: 10_000, allowed: false };
    const error = rateLimited(state, 7_200, 'this token');
    expect(error).toMatchObject({
      code: 'rate_limited',
      message: 'this token: at most 5 requests per minute; retry in 3 s',
    });
    expect(error.headers).toEqual({ 'Retry-After': '3' });
    expect(rateLimited(state, 10_000, 'x').message).toContain('retry in 1 s');
  });
});
