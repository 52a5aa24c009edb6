/**
 * The sandbox's schema as it stood before versioned migrations: migration 1 (every statement is idempotent, so a
 * database created by that old code passes through it unchanged). Never edit it: add a migration instead.
 */
export const SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS accounts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  currency TEXT NOT NULL,
  balance INTEGER NOT NULL,
  spend_cap INTEGER,
  rate_per_minute INTEGER,
  created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS tokens (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  hash TEXT NOT NULL UNIQUE,
  scopes TEXT NOT NULL,
  name TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);

CREATE TABLE IF NOT EXISTS ip_allowlist (
  account_id TEXT NOT NULL REFERENCES accounts(id),
  address TEXT NOT NULL,
  PRIMARY KEY (account_id, address)
);

CREATE TABLE IF NOT EXISTS senders (
  account_id TEXT NOT NULL REFERENCES accounts(id),
  sender TEXT NOT NULL,
  PRIMARY KEY (account_id, sender)
);

CREATE TABLE IF NOT EXISTS ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  kind TEXT NOT NULL,
  reference TEXT,
  recipient TEXT,
  amount INTEGER NOT NULL,
  balance_after INTEGER NOT NULL,
  idempotency_key TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_by_account ON ledger (account_id, created_at);

CREATE TABLE IF NOT EXISTS campaigns (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  sender TEXT NOT NULL,
  message TEXT NOT NULL,
  recipients INTEGER NOT NULL,
  segments INTEGER NOT NULL,
  encoding TEXT NOT NULL,
  cost INTEGER NOT NULL,
  currency TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS campaigns_by_account ON campaigns (account_id, seq);

CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  kind TEXT NOT NULL,
  campaign_id TEXT,
  mobile_number TEXT NOT NULL,
  sender TEXT NOT NULL,
  text TEXT NOT NULL,
  display_text TEXT NOT NULL,
  status TEXT NOT NULL,
  outcome TEXT NOT NULL,
  segments INTEGER NOT NULL,
  cost INTEGER NOT NULL,
  currency TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_account ON messages (account_id, seq);
CREATE INDEX IF NOT EXISTS messages_by_campaign ON messages (campaign_id, status);
CREATE INDEX IF NOT EXISTS messages_by_number ON messages (mobile_number);

CREATE TABLE IF NOT EXISTS status_history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  subject_id TEXT NOT NULL,
  status TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS status_history_by_subject ON status_history (subject_id, seq);

CREATE TABLE IF NOT EXISTS voice_calls (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  mobile_number TEXT NOT NULL,
  sender TEXT NOT NULL,
  message TEXT NOT NULL,
  language TEXT NOT NULL,
  repeat INTEGER NOT NULL,
  status TEXT NOT NULL,
  outcome TEXT NOT NULL,
  duration_seconds INTEGER NOT NULL,
  cost INTEGER NOT NULL,
  currency TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS voice_by_number ON voice_calls (mobile_number);

-- The carrier's pending moves: one row per message or call waiting for its next state.
CREATE TABLE IF NOT EXISTS transitions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  subject TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  status TEXT NOT NULL,
  due_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS transitions_due ON transitions (due_at, seq);

CREATE TABLE IF NOT EXISTS lookups (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS lookups_by_account ON lookups (account_id, seq);

CREATE TABLE IF NOT EXISTS otps (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  message_id TEXT NOT NULL,
  code_hash TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS webhooks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  batch INTEGER NOT NULL,
  secret TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE INDEX IF NOT EXISTS webhooks_by_account ON webhooks (account_id, seq);

-- Events waiting to be gathered into a message.status.batch body for a batch-enabled endpoint.
CREATE TABLE IF NOT EXISTS batch_items (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id TEXT NOT NULL,
  event TEXT NOT NULL
);

-- One row per delivery (one body to one endpoint); its id is the webhook-id, stable across retries.
CREATE TABLE IF NOT EXISTS deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  webhook_id TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_status INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (state, next_attempt_at);

CREATE TABLE IF NOT EXISTS idempotency_keys (
  account_id TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL,
  status_code INTEGER,
  response TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (account_id, key)
);
`;
