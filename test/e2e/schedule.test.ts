/**
 * Scheduled reminder campaigns on the real dev server: a one-off schedule fires by itself, its run reads
 * "customers whose payment is due" from a real SQLite database through a registered audience loader, and a
 * later run (triggered) reads the database afresh. Then every schedule operation: list, describe, pause,
 * unpause, update (timing, campaign, policies), delete, and clear errors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScheduleNotFoundError } from '@temporalio/client';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AudienceLoader } from '../../src/audience/loaders.js';
import type { RunningStack } from '../../src/stack.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const A = '2348030000001';
const B = '2348030000002';
const C = '2348030000003';
const D = '2348030000004';

describe('scheduled reminder campaigns', () => {
  let stack: RunningStack;
  const dir = mkdtempSync(join(tmpdir(), 'schedule-'));
  const db = new Database(join(dir, 'billing.db'));
  db.exec(
    'CREATE TABLE customers (id INTEGER PRIMARY KEY, phone TEXT NOT NULL, due_at TEXT NOT NULL, paid INTEGER NOT NULL DEFAULT 0)',
  );

  /** "Customers whose payment is due" as of the campaign's start, in keyset pages: the documented loader shape. */
  const dueCustomers: AudienceLoader = {
    async readPage({ cursor, limit, campaign }) {
      const rows = db
        .prepare('SELECT id, phone FROM customers WHERE paid = 0 AND due_at <= ? AND id > ? ORDER BY id LIMIT ?')
        .all(campaign.startedAt, cursor === null ? 0 : Number(cursor), limit) as Array<{ id: number; phone: string }>;
      return {
        recipients: rows.map((r) => r.phone),
        nextCursor: rows.length === limit ? String(rows.at(-1)!.id) : null,
      };
    },
  };

  const schedules = () => stack.msgflow.campaignSchedules;
  const campaign = {
    sender: 'ACME',
    message: 'Your payment is due',
    audience: { type: 'loader' as const, name: 'dueCustomers' },
    chunkSize: 2,
  };
  const inbox = async (n: string) => (await stack.admin.inbox(n)).length;

  beforeAll(async () => {
    stack = await startTestStack({ audienceLoaders: { dueCustomers } });
  });
  afterAll(async () => {
    await stack?.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fires at its time, and each run reaches whoever is due when it runs', { timeout: 180_000 }, async () => {
    const past = new Date(Date.now() - 86_400_000).toISOString();
    const later = new Date(Date.now() + 10 * 86_400_000).toISOString();
    const insert = db.prepare('INSERT INTO customers (phone, due_at) VALUES (?, ?)');
    insert.run(`+${A}`, past);
    insert.run(B, past);
    insert.run(C, later);

    const id = `reminder-${Date.now()}`;
    const at = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
    const created = await schedules().create({ id, timing: { at: at.toISOString() }, campaign });
    expect(created).toMatchObject({
      id,
      paused: false,
      remainingRuns: 1,
      nextRuns: [at.toISOString()],
      policies: { overlap: 'skip' },
    });

    // It fires by itself, once.
    const first = await waitFor(async () => (await schedules().describe(id)).recentRuns[0], 'the scheduled run');
    expect(Date.parse(first.scheduledAt)).toBeGreaterThanOrEqual(at.getTime());
    expect(first.workflowId).toMatch(new RegExp(`^campaign:${id}-`));
    const firstResult = await stack.msgflow.campaign(first.workflowId).result();
    expect(firstResult).toMatchObject({ sent: 2, counts: expect.objectContaining({ delivered: 2 }) });
    expect(await schedules().describe(id)).toMatchObject({ remainingRuns: 0, nextRuns: [] });

    // The database moves on: A pays, C falls due, D is added. The next run reads it as it is then.
    db.prepare('UPDATE customers SET paid = 1 WHERE phone = ?').run(`+${A}`);
    db.prepare('UPDATE customers SET due_at = ? WHERE phone = ?').run(past, C);
    insert.run(`+234 803 000 0004`, past);
    await schedules().trigger(id);
    const second = await waitFor(async () => (await schedules().describe(id)).recentRuns[1], 'the triggered run');
    // A trigger may reuse the last run's workflow id (Temporal appends the scheduled time): still a new campaign.
    const secondResult = await stack.msgflow.campaign(second.workflowId).result();
    expect(secondResult).toMatchObject({ sent: 3, counts: expect.objectContaining({ delivered: 3 }) });

    expect({ A: await inbox(A), B: await inbox(B), C: await inbox(C), D: await inbox(D) }).toEqual({
      A: 1,
      B: 2,
      C: 1,
      D: 1,
    });
    await schedules().delete(id);
  });

  it('lists, describes, pauses, unpauses, updates and deletes', { timeout: 120_000 }, async () => {
    const id = `ops-${Date.now()}`;
    await schedules().create({
      id,
      timing: { cron: ['0 9 * * MON'], timeZone: 'Africa/Lagos', jitterMs: 60_000 },
      campaign,
      policies: { catchupWindowMs: 600_000 },
      note: 'weekly payment reminder',
    });
    const listed = await waitFor(
      async () => (await schedules().list()).find((s) => s.id === id),
      'the schedule to be listed',
    );
    expect(listed).toMatchObject({ paused: false });

    const described = await schedules().describe(id);
    expect(described).toMatchObject({
      timing: { cron: ['0 9 * * MON'], timeZone: 'Africa/Lagos', jitterMs: 60_000 },
      timeZone: 'Africa/Lagos',
      policies: { overlap: 'skip', catchupWindowMs: 600_000, pauseOnFailure: false },
      remainingRuns: null,
      campaign,
    });
    // Mondays 09:00 in Lagos are 08:00 UTC (plus up to a minute of jitter).
    const next = new Date(described.nextRuns[0]!);
    expect(next.getUTCDay()).toBe(1);
    expect(next.getUTCHours()).toBe(8);

    await schedules().pause(id, 'holiday week');
    expect(await schedules().describe(id)).toMatchObject({ paused: true, note: 'holiday week' });
    await schedules().unpause(id);
    expect(await schedules().describe(id)).toMatchObject({ paused: false });

    const updated = await schedules().update(id, {
      timing: { cron: ['30 17 * * FRI'] },
      campaign: {
        message: 'Reminder: payment due today',
        sendWindow: { start: '08:00', end: '20:00', timeZone: 'Africa/Lagos' },
      },
      policies: { overlap: 'buffer_one' },
    });
    expect(updated).toMatchObject({
      timing: { cron: ['30 17 * * FRI'], timeZone: 'Africa/Lagos' },
      policies: { overlap: 'buffer_one', catchupWindowMs: 600_000 },
      campaign: { ...campaign, message: 'Reminder: payment due today' },
    });
    const friday = new Date(updated.nextRuns[0]!);
    expect([friday.getUTCDay(), friday.getUTCHours()]).toEqual([5, 16]);

    // A one-off replaces the recurring timing, with one run left (the jitter is kept: up to a minute later).
    const once = await schedules().update(id, { timing: { at: '2099-01-01T09:00:00+01:00' } });
    expect(once).toMatchObject({ timing: { at: '2099-01-01T09:00:00+01:00', jitterMs: 60_000 }, remainingRuns: 1 });
    expect(once.nextRuns).toHaveLength(1);
    const onceAt = Date.parse(once.nextRuns[0]!) - Date.parse('2099-01-01T08:00:00Z');
    expect(onceAt >= 0 && onceAt < 60_000).toBe(true);

    await expect(schedules().update(id, { campaign: { chunkSize: 5000 } })).rejects.toThrow(InvalidWorkflowInputError);
    await expect(schedules().create({ id: 'bad', timing: {}, campaign })).rejects.toThrow(/timing/);
    await expect(schedules().create({ id: 'has space', timing: { cron: ['@daily'] }, campaign })).rejects.toThrow(/id/);

    await schedules().delete(id);
    await expect(schedules().describe(id)).rejects.toThrow(ScheduleNotFoundError);
  });
});
