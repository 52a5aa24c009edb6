/**
 * Versioned migrations: a `.data/sandbox.db` written by the sandbox before migrations existed (the schema
 * of SCHEMA_V1, user_version 0) upgrades in place, keeps its data, and serves it; opening again is a no-op.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/sandbox/db.js';
import { MIGRATIONS, schemaVersion } from '../../src/sandbox/migrations.js';
import { SCHEMA_V1 } from '../../src/sandbox/schema-v1.js';
import { SandboxAdmin, startSandbox } from '../../src/sandbox/index.js';
import { FAST_TIMINGS } from '../support/sandbox.js';

const dir = mkdtempSync(join(tmpdir(), 'msgflow-migrations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OLD_TOKEN = 'sk_sandbox_created-by-the-old-schema-0123456789';

/** A database exactly as the sandbox wrote it before migrations: the old schema and some data. */
function oldDatabase(path: string): void {
  const db = new Database(path);
  db.exec(SCHEMA_V1);
  db.prepare(
    "INSERT INTO accounts (id, name, currency, balance, created_at) VALUES ('acct_old', 'Old account', 'USD', 900, 1)",
  ).run();
  db.prepare(
    "INSERT INTO tokens (id, account_id, hash, scopes, name, created_at) VALUES ('tok_old', 'acct_old', ?, '[\"reports\",\"balance\"]', 'old', 1)",
  ).run(createHash('sha256').update(OLD_TOKEN).digest('hex'));
  db.prepare(
    `INSERT INTO messages (id, account_id, kind, mobile_number, sender, text, display_text, status, outcome, segments,
       cost, currency, created_at, updated_at)
     VALUES ('msg_old', 'acct_old', 'sms', '2348012345678', 'ACME', 'hi', 'hi', 'delivered', 'delivered', 1, 3, 'USD', 1, 2)`,
  ).run();
  db.prepare(
    "INSERT INTO webhooks (id, account_id, url, events, batch, secret, created_at) VALUES ('wh_old', 'acct_old', 'http://127.0.0.1:9/x', '[\"*\"]', 0, 'whsec_AAAA', 1)",
  ).run();
  db.prepare(
    "INSERT INTO deliveries (id, webhook_id, body, state, attempts, next_attempt_at, last_status, created_at) VALUES ('evt_old', 'wh_old', '{}', 'failed', 3, 1, 500, 1)",
  ).run();
  expect(db.pragma('user_version', { simple: true })).toBe(0);
  db.close();
}

describe('sandbox database migrations', () => {
  it('upgrades a database created by the old schema in place, keeping its data', async () => {
    const path = join(dir, 'old.db');
    oldDatabase(path);
    const db = await openDatabase(path);
    expect(schemaVersion(db)).toBe(MIGRATIONS.length);
    const columns = (table: string) =>
      (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    expect(columns('tokens')).toEqual(expect.arrayContaining(['prefix', 'last_used_at']));
    expect(columns('delivery_attempts')).toEqual(
      expect.arrayContaining(['delivery_id', 'attempt', 'started_at', 'latency_ms', 'status', 'response_start']),
    );
    expect(columns('accounts')).toContain('webhooks_paused');
    expect(db.prepare("SELECT name, balance, webhooks_paused FROM accounts WHERE id = 'acct_old'").get()).toEqual({
      name: 'Old account',
      balance: 900,
      webhooks_paused: 0,
    });
    expect(db.prepare("SELECT prefix, last_used_at FROM tokens WHERE id = 'tok_old'").get()).toEqual({
      prefix: null,
      last_used_at: null,
    });
    db.close();

    // Opening again applies nothing twice.
    const again = await openDatabase(path);
    expect(schemaVersion(again)).toBe(MIGRATIONS.length);
    again.close();
  });

  it('serves the upgraded data: the old token works and is listed without a prefix, old deliveries read', async () => {
    const path = join(dir, 'served.db');
    oldDatabase(path);
    const sandbox = await startSandbox({
      port: 0,
      db: path,
      adminToken: 'admin-token-for-migrations',
      log: () => {},
      ...FAST_TIMINGS,
    });
    try {
      const admin = new SandboxAdmin({ url: sandbox.url, adminToken: sandbox.adminToken });
      const message = await fetch(`${sandbox.baseUrl}/messages/msg_old`, {
        headers: { authorization: `Bearer ${OLD_TOKEN}` },
      });
      expect(message.status).toBe(200);
      const [token] = await admin.tokens('acct_old');
      expect(token).toMatchObject({ id: 'tok_old', prefix: null });
      expect(token!.last_used_at).not.toBeNull();
      const [delivery] = await admin.deliveries('acct_old');
      expect(delivery).toMatchObject({ id: 'evt_old', state: 'failed', attempts: [], message_ids: [] });
    } finally {
      await sandbox.close();
    }
  });

  it('starts a new database at the latest version', async () => {
    const db = await openDatabase(':memory:');
    expect(schemaVersion(db)).toBe(MIGRATIONS.length);
    db.close();
  });
});
