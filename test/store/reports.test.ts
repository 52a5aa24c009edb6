/**
 * A campaign's report and outcome feed over a real SQLite store, and the same report from the command line
 * (`msgflow campaign report`, `msgflow message show`) reading the store's file.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CampaignReports } from '../../src/starter/reports.js';
import { type MessageStore, openMessageStore } from '../../src/store/index.js';

const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'store-reports-'));
const file = join(dir, 'msgflow.db');
const at = (s: number) => `2026-11-23T08:00:${String(s).padStart(2, '0')}Z`;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MSGFLOW_')));
  return new Promise((done) =>
    execFile(
      join(root, 'node_modules/.bin/tsx'),
      [join(root, 'src/cli/main.ts'), ...args],
      { cwd: dir, env: { ...env, MSGFLOW_STORE_FILE: file } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe('campaign reports', () => {
  let store: MessageStore;
  let reports: CampaignReports;
  beforeAll(async () => {
    store = await openMessageStore({ file });
    reports = new CampaignReports(store);
    await store.register(
      'campaign:spring',
      ['m1', 'm2', 'm3'].map((id, i) => ({
        providerMessageId: id,
        number: `23480100000${i}`,
        campaignKey: 'spring',
      })),
    );
    await store.register('campaign:other', [
      { providerMessageId: 'x1', number: '2348019999999', campaignKey: 'other' },
    ]);
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every recipient with its state, filtered by state, a page at a time', async () => {
    await store.recordEvents([{ providerMessageId: 'm1', status: 'delivered', timestamp: at(1) }]);
    const all = [];
    for await (const row of reports.rows('spring')) all.push(row);
    expect(all.map((r) => [r.providerMessageId, r.number, r.status, r.final])).toEqual([
      ['m1', '234801000000', 'delivered', true],
      ['m2', '234801000001', null, false],
      ['m3', '234801000002', null, false],
    ]);
    const first = await reports.page('spring', { limit: 2 });
    expect(first.rows).toHaveLength(2);
    const second = await reports.page('spring', { limit: 2, after: first.next! });
    expect(second.rows.map((r) => r.providerMessageId)).toEqual(['m3']);
    expect((await reports.page('spring', { status: 'delivered' })).rows.map((r) => r.providerMessageId)).toEqual([
      'm1',
    ]);
  });

  it('feeds each outcome once as it settles, and ends once the campaign is done and drained', async () => {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const seen: string[] = [];
    const feed = (async () => {
      for await (const row of reports.outcomes('spring', { pollIntervalMs: 20, done })) {
        seen.push(`${row.providerMessageId}:${row.status}`);
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    // A duplicate and a later conflicting event for m1 change nothing; m2 settles while the feed runs.
    await store.recordEvents([
      { providerMessageId: 'm1', status: 'failed', timestamp: at(5) },
      { providerMessageId: 'm2', status: 'undelivered', timestamp: at(6) },
      { providerMessageId: 'x1', status: 'delivered', timestamp: at(6) },
    ]);
    await new Promise((r) => setTimeout(r, 100));
    await store.recordEvents([{ providerMessageId: 'm3', status: 'expired', timestamp: at(7) }]);
    finish();
    await feed;
    expect(seen).toEqual(['m1:delivered', 'm2:undelivered', 'm3:expired']);
  });

  it('prints the report as CSV and NDJSON, and one message, from the command line', async () => {
    const csv = await cli(['campaign', 'report', 'spring']);
    expect(csv.code).toBe(0);
    expect(csv.stdout.trim().split('\n')).toEqual([
      'provider_message_id,number,status,final,timestamp,source',
      `m1,234801000000,delivered,true,${at(1)},webhook`,
      `m2,234801000001,undelivered,true,${at(6)},webhook`,
      `m3,234801000002,expired,true,${at(7)},webhook`,
    ]);
    const ndjson = await cli(['campaign', 'report', 'spring', '--format', 'ndjson', '--status', 'expired']);
    expect(
      ndjson.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      {
        provider_message_id: 'm3',
        number: '234801000002',
        status: 'expired',
        final: true,
        timestamp: at(7),
        source: 'webhook',
      },
    ]);
    const shown = await cli(['message', 'show', 'm2', '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      providerMessageId: 'm2',
      campaignKey: 'spring',
      final: { status: 'undelivered', source: 'webhook' },
      waiters: [{ workflowId: 'campaign:spring' }],
    });
    const missing = await cli(['message', 'show', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no message nope');
  });
});
