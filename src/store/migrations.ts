/**
 * The store's schema history. Each migration runs once, in order, in its own transaction, recorded in
 * `schema_migrations`; never edit a released one, append a new one. Times we take are integer ms since
 * the epoch; the provider's timestamps are kept as received (text).
 */

export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
}

const V1_MESSAGES = (bigint: string) => `
CREATE TABLE messages (
  provider_message_id TEXT PRIMARY KEY,
  final_status TEXT,
  final_timestamp TEXT,
  final_event_id TEXT,
  last_status TEXT,
  last_status_timestamp TEXT,
  -- The number: clear, or sealed (v1.<keyId>.<data>) when a key ring is configured.
  recipient TEXT,
  -- For lookups by number: the number, or its HMAC-SHA256 under the lookup key when encrypted.
  recipient_lookup TEXT,
  campaign_key TEXT,
  first_seen_at ${bigint} NOT NULL,
  last_seen_at ${bigint} NOT NULL
);
CREATE INDEX messages_by_campaign ON messages (campaign_key, provider_message_id) WHERE campaign_key IS NOT NULL;
CREATE INDEX messages_by_recipient ON messages (recipient_lookup) WHERE recipient_lookup IS NOT NULL;
CREATE INDEX messages_by_last_seen ON messages (last_seen_at);

CREATE TABLE waiters (
  provider_message_id TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  registered_at ${bigint} NOT NULL,
  released_at ${bigint},
  PRIMARY KEY (provider_message_id, workflow_id)
);
CREATE INDEX waiters_by_workflow ON waiters (workflow_id);
`;

// served: bulk requests granted, each counted 1/weight; asked_at: the last ask; refused_at: the last refusal
// while the team still waits (NULL once granted).
const V10_BUDGET_TEAMS = (real: string, bigint: string) => `
CREATE TABLE request_budget_teams (
  budget TEXT NOT NULL,
  team TEXT NOT NULL,
  served ${real} NOT NULL,
  asked_at ${bigint} NOT NULL,
  refused_at ${bigint},
  PRIMARY KEY (budget, team)
);
`;

const OTP_EVENT_INDEXES = `
CREATE INDEX otp_sends_by_prefix ON otp_events (prefix, at) WHERE kind = 'send';
CREATE INDEX otp_sends_by_country ON otp_events (country, at) WHERE kind = 'send';
CREATE INDEX otp_events_by_session ON otp_events (session, kind);
CREATE INDEX otp_events_by_time ON otp_events (at);
CREATE INDEX otp_events_by_number ON otp_events (number_lookup);
`;

// untold_since: when the waiter's final outcome was recorded and not yet told to its workflow (NULL: nothing
// to tell); told_at: when it was told (by the relay, or by `register` handing it back). relay_claims: which
// relay tells a workflow (until lease_until) and when it last did, so the rate rule holds across replicas.
const V8_OUTBOX = (bigint: string) => `
ALTER TABLE waiters ADD COLUMN untold_since ${bigint};
ALTER TABLE waiters ADD COLUMN told_at ${bigint};
CREATE INDEX waiters_untold_by_workflow ON waiters (workflow_id, untold_since) WHERE untold_since IS NOT NULL;
CREATE INDEX waiters_untold_by_age ON waiters (untold_since) WHERE untold_since IS NOT NULL;
CREATE TABLE relay_claims (
  workflow_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  lease_until ${bigint} NOT NULL,
  last_told_at ${bigint} NOT NULL
);
`;

// campaign_inputs: a campaign's input (JSON) as it started, sealed when encrypted: it holds the text.
// campaign_rows: each recipient's audience fields (JSON, sealed) of a personal campaign, by the number's lookup.
const V9_CAMPAIGN_INPUTS = (bigint: string) => `
CREATE TABLE campaign_inputs (
  campaign_key TEXT PRIMARY KEY,
  input TEXT NOT NULL,
  kept_at ${bigint} NOT NULL
);
CREATE TABLE campaign_rows (
  campaign_key TEXT NOT NULL,
  recipient_lookup TEXT NOT NULL,
  fields TEXT NOT NULL,
  PRIMARY KEY (campaign_key, recipient_lookup)
);
CREATE INDEX campaign_rows_by_recipient ON campaign_rows (recipient_lookup);
`;

// final_source: where the message's final state came from: `webhook` (a status event the ingress received) or
// `provider` (asked of the provider: a wait window's last look, or a voice call followed to its end). Final
// states recorded before this column existed all came from webhooks.
// otp_events.channel (`sms` | `voice`) and delivery_id (the text's provider_message_id or the call's id, whose
// final state is in `messages`): the guard report's conversion per channel. Earlier sends' channel is read from
// their key (a call's ends in /voice); their delivery is not known.
const V11_FINAL_SOURCE = `
ALTER TABLE messages ADD COLUMN final_source TEXT;
UPDATE messages SET final_source = 'webhook' WHERE final_status IS NOT NULL;
ALTER TABLE otp_events ADD COLUMN channel TEXT;
ALTER TABLE otp_events ADD COLUMN delivery_id TEXT;
UPDATE otp_events SET channel = CASE WHEN event_key LIKE '%/voice' THEN 'voice' ELSE 'sms' END WHERE kind = 'send';
`;

// waiters_pending_by_workflow: a workflow's waiters whose message has no final state yet, so "is it still
// waiting for anything?" is one index lookup. relay_claims.flushed: 1 once the workflow was told ahead of the
// rate rule because nothing else was pending (allowed once per claim row).
const V12_PENDING = `
CREATE INDEX waiters_pending_by_workflow ON waiters (workflow_id)
  WHERE untold_since IS NULL AND told_at IS NULL AND released_at IS NULL;
ALTER TABLE relay_claims ADD COLUMN flushed INTEGER NOT NULL DEFAULT 0;
`;

// relay_claims.refusals: how many signals in a row Temporal refused the workflow for a reason of its own (an
// outage is not counted); retry_at: not claimed before then (its backoff, then the slow lane's pace); refusal: the
// last refusal's reason, for an operator. waiters_untold_by_age gains the workflow: the sweep's cursor walks the
// untold outcomes oldest first, and from them their workflows.
const V13_REFUSALS = (bigint: string) => `
ALTER TABLE relay_claims ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;
ALTER TABLE relay_claims ADD COLUMN retry_at ${bigint} NOT NULL DEFAULT 0;
ALTER TABLE relay_claims ADD COLUMN refusal TEXT;
DROP INDEX waiters_untold_by_age;
CREATE INDEX waiters_untold_by_age ON waiters (untold_since, workflow_id) WHERE untold_since IS NOT NULL;
`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'messages and waiters',
    sqlite: V1_MESSAGES('INTEGER'),
    postgres: V1_MESSAGES('BIGINT'),
  },
  {
    version: 2,
    name: 'rejected events',
    sqlite: `
CREATE TABLE rejected_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  received_at INTEGER NOT NULL,
  reason TEXT NOT NULL,
  -- The event as received (JSON), sealed when a key ring is configured: it holds a phone number.
  event TEXT NOT NULL
);
CREATE INDEX rejected_events_by_time ON rejected_events (received_at);
`,
    postgres: `
CREATE TABLE rejected_events (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  received_at BIGINT NOT NULL,
  reason TEXT NOT NULL,
  event TEXT NOT NULL
);
CREATE INDEX rejected_events_by_time ON rejected_events (received_at);
`,
  },
  {
    version: 3,
    name: 'when each final state was recorded, for the outcome feed',
    sqlite: `
ALTER TABLE messages ADD COLUMN final_recorded_at INTEGER;
CREATE INDEX messages_settled_by_campaign ON messages (campaign_key, final_recorded_at) WHERE final_recorded_at IS NOT NULL;
`,
    postgres: `
ALTER TABLE messages ADD COLUMN final_recorded_at BIGINT;
CREATE INDEX messages_settled_by_campaign ON messages (campaign_key, final_recorded_at) WHERE final_recorded_at IS NOT NULL;
`,
  },
  {
    version: 4,
    name: 'suppression list (opt-outs)',
    // lookup: the number (+E.164), or its HMAC-SHA256 under the lookup key when encrypted, as messages use.
    // number: clear, or sealed under the key ring; NULL once the person's data was erased (the opt-out stays).
    sqlite: `
CREATE TABLE suppressions (
  lookup TEXT PRIMARY KEY,
  number TEXT,
  reason TEXT,
  added_at INTEGER NOT NULL
);
CREATE INDEX suppressions_by_time ON suppressions (added_at, lookup);
`,
    postgres: `
CREATE TABLE suppressions (
  lookup TEXT PRIMARY KEY,
  number TEXT,
  reason TEXT,
  added_at BIGINT NOT NULL
);
CREATE INDEX suppressions_by_time ON suppressions (added_at, lookup);
`,
  },
  {
    version: 5,
    name: "the provider token's request budget (request-budget.ts)",
    sqlite: `
CREATE TABLE request_budgets (
  name TEXT PRIMARY KEY,
  tokens REAL NOT NULL,
  refilled_at INTEGER NOT NULL
);
`,
    postgres: `
CREATE TABLE request_budgets (
  name TEXT PRIMARY KEY,
  tokens DOUBLE PRECISION NOT NULL,
  refilled_at BIGINT NOT NULL
);
`,
  },
  {
    version: 6,
    name: "the OTP sessions' record: sends as the fraud guard judged them, and verifications (otp-events.ts)",
    // number: clear, or sealed under the key ring; number_lookup and prefix: clear, or HMAC-SHA256 under the
    // lookup key. seq orders the guard's judgements as they saw each other.
    sqlite: `
CREATE TABLE otp_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  session TEXT NOT NULL,
  purpose TEXT,
  number TEXT,
  number_lookup TEXT,
  country TEXT,
  prefix TEXT,
  at INTEGER NOT NULL,
  verdict TEXT,
  reason TEXT,
  retry_after_seconds INTEGER,
  cost INTEGER,
  currency TEXT
);
${OTP_EVENT_INDEXES}`,
    postgres: `
CREATE TABLE otp_events (
  seq BIGSERIAL PRIMARY KEY,
  event_key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  session TEXT NOT NULL,
  purpose TEXT,
  number TEXT,
  number_lookup TEXT,
  country TEXT,
  prefix TEXT,
  at BIGINT NOT NULL,
  verdict TEXT,
  reason TEXT,
  retry_after_seconds BIGINT,
  cost BIGINT,
  currency TEXT
);
${OTP_EVENT_INDEXES}`,
  },
  {
    version: 7,
    name: "each message's send span, so the ingress can link its status event to the send's trace",
    // trace_parent: the W3C traceparent of the span that registered the message; NULL when it was not traced.
    sqlite: 'ALTER TABLE messages ADD COLUMN trace_parent TEXT;',
    postgres: 'ALTER TABLE messages ADD COLUMN trace_parent TEXT;',
  },
  {
    version: 8,
    name: 'the outbox: which outcomes are still to be told to their workflows, and the relays claims (outbox.ts)',
    sqlite: V8_OUTBOX('INTEGER'),
    postgres: V8_OUTBOX('BIGINT'),
  },
  {
    version: 9,
    name: "what a campaign's retry needs: its input and personal rows (campaign-inputs.ts)",
    sqlite: V9_CAMPAIGN_INPUTS('INTEGER'),
    postgres: V9_CAMPAIGN_INPUTS('BIGINT'),
  },
  {
    version: 10,
    name: "each team's standing in a request budget: its fair share of the bulk requests (team-shares.ts)",
    sqlite: V10_BUDGET_TEAMS('REAL', 'INTEGER'),
    postgres: V10_BUDGET_TEAMS('DOUBLE PRECISION', 'BIGINT'),
  },
  {
    version: 11,
    name: "where each final state came from (a webhook, or the provider's answer), and each OTP send's channel and delivery",
    sqlite: V11_FINAL_SOURCE,
    postgres: V11_FINAL_SOURCE,
  },
  {
    version: 12,
    name: 'whether a workflow still waits for any outcome, and its one early signal when it does not (outbox.ts)',
    sqlite: V12_PENDING,
    postgres: V12_PENDING,
  },
  {
    version: 13,
    name: "a workflow whose signals Temporal refuses waits out its own backoff; the sweep's cursor by age (outbox.ts)",
    sqlite: V13_REFUSALS('INTEGER'),
    postgres: V13_REFUSALS('BIGINT'),
  },
];
