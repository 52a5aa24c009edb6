/** Spec "Pagination" 1–4 and opaque, unforgeable cursors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paginated } from '../../src/api/common.js';
import { CampaignRecord, MessageRecord } from '../../src/api/sms.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type ApiCaller, apiFor, eventually, sms } from './helpers.js';

async function allPages(api: ApiCaller, path: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const reply = await api('GET', cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path);
    expect(reply.status).toBe(200);
    ids.push(...reply.body.data.map((item: { id: string }) => item.id));
    cursor = reply.body.next_cursor;
    pages += 1;
  } while (cursor !== null);
  return { ids, pages };
}

describe('pagination', () => {
  let t: TestSandbox;
  let api: ApiCaller;
  let sentIds: string[];
  beforeAll(async () => {
    t = await startTestSandbox();
    api = apiFor(t.sandbox.baseUrl, (await t.newAccount({ ratePerMinute: 10_000 })).token);
    sentIds = [];
    for (let i = 0; i < 7; i += 1) {
      const reply = await api('POST', '/sms/send', sms([`120255501${10 + i}`], `message ${i}`));
      sentIds.push(reply.body.data.messages[0].provider_message_id);
    }
  });
  afterAll(() => t.close());

  it('rule 1: a response has data, next_cursor and per_page, on every list', async () => {
    expect(paginated(MessageRecord).parse((await api('GET', '/messages?per_page=3')).body).per_page).toBe(3);
    expect(paginated(CampaignRecord).parse((await api('GET', '/campaigns?per_page=3')).body).data).toHaveLength(3);
    for (const path of ['/lookups', '/webhooks']) {
      expect(Object.keys((await api('GET', path)).body).sort()).toEqual(['data', 'next_cursor', 'per_page']);
    }
  });

  it('rules 2–3: next_cursor leads to the following page, null on the last; newest first, nothing skipped or repeated', async () => {
    const { ids, pages } = await allPages(api, '/messages?per_page=3');
    expect(pages).toBe(3);
    expect(ids).toEqual([...sentIds].reverse());
    const exact = await allPages(api, '/messages?per_page=7');
    expect(exact.pages).toBe(1); // a full last page has next_cursor null too
  });

  it('rule 4: stable under inserts', async () => {
    const first = await api('GET', '/messages?per_page=3');
    const seen: string[] = first.body.data.map((m: { id: string }) => m.id);
    for (let i = 0; i < 4; i += 1) await api('POST', '/sms/send', sms(['12025550130'], `inserted ${i}`));
    let cursor: string | null = first.body.next_cursor;
    while (cursor) {
      const page = await api('GET', `/messages?per_page=3&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...page.body.data.map((m: { id: string }) => m.id));
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual([...sentIds].reverse());
  });

  it('filters on status, and a cursor belongs to its filter', async () => {
    await api('POST', '/sms/send', sms(['12025550102', '12025550102', '12025550102']));
    await eventually(
      () => api('GET', '/messages?status=failed'),
      (r) => r.body.data.length === 3,
    );
    const page = await api('GET', '/messages?status=failed&per_page=2');
    expect(page.body.data.every((m: { status: string }) => m.status === 'failed')).toBe(true);
    const next = await api(
      'GET',
      `/messages?status=failed&per_page=2&cursor=${encodeURIComponent(page.body.next_cursor)}`,
    );
    expect(next.body.data).toHaveLength(1);
    const otherFilter = await api(
      'GET',
      `/messages?status=delivered&cursor=${encodeURIComponent(page.body.next_cursor)}`,
    );
    expect(otherFilter.status).toBe(400);
    expect(otherFilter.body.code).toBe('invalid_cursor');
    const campaigns = await api('GET', '/campaigns?status=failed');
    expect(campaigns.body.data).toHaveLength(1);
    expect(campaigns.body.data[0].counts.failed).toBe(3);
    expect((await api('GET', '/messages?status=bogus')).status).toBe(422);
  });

  it('a tampered, forged, foreign or other-list cursor is 400 invalid_cursor', async () => {
    const cursor: string = (await api('GET', '/messages?per_page=2')).body.next_cursor;
    const [payload, signature] = cursor.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forgedPayload = Buffer.from(JSON.stringify({ ...decoded, s: decoded.s + 100 })).toString('base64url');
    const flipped = signature.slice(0, -2) + (signature.endsWith('AA') ? 'BB' : 'AA');
    const other = apiFor(t.sandbox.baseUrl, (await t.newAccount()).token);
    const attempts: [ApiCaller, string][] = [
      [api, `/messages?cursor=${forgedPayload}.${signature}`],
      [api, `/messages?cursor=${payload}.${flipped}`],
      [api, '/messages?cursor=not-a-cursor'],
      [api, `/messages?cursor=${payload}`],
      [api, `/campaigns?cursor=${encodeURIComponent(cursor)}`],
      [other, `/messages?cursor=${encodeURIComponent(cursor)}`],
    ];
    for (const [caller, path] of attempts) {
      const reply = await caller('GET', path);
      expect(reply.status, path).toBe(400);
      expect(reply.body.code).toBe('invalid_cursor');
    }
  });
});
