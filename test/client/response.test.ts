/**
 * Reading a successful response: the envelope a response must have to be usable, leniency towards payloads
 * that stray from the contract inside it (strictness refuses them), JSON bodies, and `lastResponse`.
 */
import { describe, expect, it } from 'vitest';
import { routes } from '../../src/api/routes.js';
import { parseJson, parsePayload, UNPARSABLE, withResponse } from '../../src/client/response.js';

const balance = { balance: 1000, currency: 'USD', spend_cap: null, spent_this_month: 0 };
const lookup = { id: 'lkp_1' };

describe('parsePayload', () => {
  it('has nothing to read for a route without a response', () => {
    expect(parsePayload(routes.webhookDelete, { anything: 1 }, true)).toEqual({
      ok: true,
      payload: undefined,
      issues: [],
    });
  });

  it('returns a record that matches, unknown fields kept', () => {
    const body = { data: { ...balance, extra: 'kept' } };
    expect(parsePayload(routes.balanceGet, body, true)).toEqual({ ok: true, payload: body.data, issues: [] });
  });

  it('refuses a response that is not the envelope, naming what is missing', () => {
    const record = (body: unknown) => parsePayload(routes.balanceGet, body, false);
    expect(record(undefined)).toEqual({ ok: false, reason: 'the response has no `data` envelope' });
    expect(record([balance])).toEqual({ ok: false, reason: 'the response has no `data` envelope' });
    expect(record({ balance })).toEqual({ ok: false, reason: 'the response has no `data` envelope' });
    expect(record({ data: [balance] })).toEqual({ ok: false, reason: 'the response `data` is not an object' });
    expect(record({ data: null })).toEqual({ ok: false, reason: 'the response `data` is not an object' });
    const list = (body: unknown) => parsePayload(routes.lookupList, body, false);
    expect(list({ data: lookup, next_cursor: null })).toEqual({
      ok: false,
      reason: 'the list response has no `data` array',
    });
    expect(list({ data: [] })).toEqual({ ok: false, reason: 'the list response has no `next_cursor`' });
    expect(list({ data: [], next_cursor: 3 })).toEqual({ ok: false, reason: 'the list response has no `next_cursor`' });
  });

  it('accepts a list page whose cursor is a string or null', () => {
    for (const next_cursor of [null, 'c_1']) {
      const parsed = parsePayload(routes.lookupList, { data: [], next_cursor, per_page: 20 }, true);
      expect(parsed, String(next_cursor)).toMatchObject({ ok: true, issues: [] });
    }
  });

  it('returns a straying record as sent with its issues, or refuses it when strict', () => {
    const body = { data: { ...balance, balance: 'a lot' } };
    expect(parsePayload(routes.balanceGet, body, false)).toEqual({
      ok: true,
      payload: body.data,
      issues: ['balance: invalid_type'],
    });
    expect(parsePayload(routes.balanceGet, body, true)).toEqual({
      ok: false,
      reason: 'the response does not match the contract (balance: invalid_type)',
    });
    const twice = { data: { ...balance, balance: 'a lot', currency: 7 } };
    expect(parsePayload(routes.balanceGet, twice, true)).toMatchObject({
      reason: 'the response does not match the contract (balance: invalid_type; currency: invalid_type)',
    });
  });

  it('names issues in a list by their place in the page, and returns the page as sent', () => {
    const body = { data: [{ nope: true }], next_cursor: null, per_page: 20 };
    const parsed = parsePayload(routes.lookupList, body, false);
    expect(parsed).toMatchObject({ ok: true, payload: body });
    expect(parsed.ok && parsed.issues[0]).toMatch(/^data\.0\./);
  });
});

describe('parseJson', () => {
  it('reads JSON, an empty body as undefined, anything else as UNPARSABLE', () => {
    expect(parseJson('{"a":1}')).toEqual({ a: 1 });
    expect(parseJson('  \n')).toBeUndefined();
    expect(parseJson('')).toBeUndefined();
    expect(parseJson('<html>')).toBe(UNPARSABLE);
  });
});

describe('withResponse', () => {
  it('attaches lastResponse without it showing in the serialized result', () => {
    const meta = { status: 200, headers: {}, requestId: 'req_1' } as unknown as Parameters<typeof withResponse>[1];
    const result = withResponse({ ok: 1 }, meta);
    expect(result.lastResponse).toBe(meta);
    expect(JSON.stringify(result)).toBe('{"ok":1}');
  });

  it('can attach the response again to a result that already has one (a retried call reusing its object)', () => {
    const meta = (requestId: string) =>
      ({ status: 200, headers: {}, requestId }) as unknown as Parameters<typeof withResponse>[1];
    const result = withResponse(withResponse({ ok: 1 }, meta('req_1')), meta('req_2'));
    expect(result.lastResponse.requestId).toBe('req_2');
  });
});
