/**
 * Versioned migrations of the sandbox database. SQLite's `user_version` holds the number of steps applied;
 * opening a database applies the missing ones in order, each in its own transaction, so a `.data/sandbox.db`
 * written by an older sandbox upgrades in place. Steps are append-only: never edit a released one.
 */
// The driver's type, not db.ts's alias: db.ts imports this module.
import type { Database as Db } from 'better-sqlite3';
import { SCHEMA_V1 } from './schema-v1.js';

export const MIGRATIONS: readonly string[] = [
  SCHEMA_V1,
  // 2: what the web console shows. Token prefixes and last use; every webhook delivery attempt; which messages
  // a delivery carries; the previous signing secret during a rotation; paused deliveries; forced outcomes.
  `
  ALTER TABLE tokens ADD COLUMN prefix TEXT;
  ALTER TABLE tokens ADD COLUMN last_used_at INTEGER;

  CREATE TABLE delivery_attempts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    latency_ms INTEGER NOT NULL,
    status INTEGER,
    error TEXT,
    response_start TEXT
  );
  CREATE INDEX delivery_attempts_by_delivery ON delivery_attempts (delivery_id, seq);

  CREATE TABLE delivery_messages (
    delivery_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (delivery_id, message_id)
  );
  CREATE INDEX delivery_messages_by_message ON delivery_messages (message_id);

  ALTER TABLE deliveries ADD COLUMN updated_at INTEGER;
  ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
  ALTER TABLE webhooks ADD COLUMN previous_secret_until INTEGER;
  ALTER TABLE accounts ADD COLUMN webhooks_paused INTEGER NOT NULL DEFAULT 0;

  CREATE TABLE forced_outcomes (
    mobile_number TEXT PRIMARY KEY,
    outcome TEXT NOT NULL,
    final_delay_ms INTEGER
  );
  ALTER TABLE messages ADD COLUMN final_delay_ms INTEGER;
  `,
  // 3: an OTP's code kept sealed (with the sandbox's OTP key) and its number, so it can be delivered again over
  // another channel; a call's script as the inbox compares it (an OTP call's code masked).
  `
  ALTER TABLE otps ADD COLUMN code_sealed TEXT;
  ALTER TABLE otps ADD COLUMN mobile_number TEXT;
  ALTER TABLE voice_calls ADD COLUMN display_message TEXT;
  `,
];

export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

export function migrate(db: Db): void {
  // IMMEDIATE takes the write lock first, so two processes opening one file never apply a step twice.
  const step = db.transaction(() => {
    const version = schemaVersion(db);
    if (version >= MIGRATIONS.length) return false;
    db.exec(MIGRATIONS[version]!);
    db.pragma(`user_version = ${version + 1}`);
    return true;
  });
  while (step.immediate()) {
    // one step per transaction
  }
}
