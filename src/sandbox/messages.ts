/** Message and campaign rows, and their JSON as the reports endpoints return them. */
import type { CampaignRecord, MessageRecord } from '../api/sms.js';
import type { MessageStatus } from '../api/events.js';
import { isFinalStatus } from '../api/constants.js';
import { messageOutcomeFor } from './carrier.js';
import type { Db } from './db.js';
import { forcedOutcomeFor } from './test-controls.js';
import { timestampOf } from './time.js';

export interface MessageRow {
  seq: number;
  id: string;
  account_id: string;
  kind: 'sms' | 'otp';
  campaign_id: string | null;
  mobile_number: string;
  sender: string;
  text: string;
  display_text: string;
  status: MessageStatus;
  segments: number;
  cost: number;
  currency: string;
  created_at: number;
  updated_at: number;
}

export interface CampaignRow {
  seq: number;
  id: string;
  account_id: string;
  sender: string;
  message: string;
  recipients: number;
  segments: number;
  encoding: string;
  cost: number;
  currency: string;
  created_at: number;
}

export interface NewMessage {
  id: string;
  accountId: string;
  kind: 'sms' | 'otp';
  campaignId: string | null;
  /** digits only */
  mobileNumber: string;
  sender: string;
  /** The text as delivered to the handset (the inbox shows it). */
  text: string;
  /** The text as reports show it (OTP codes masked). */
  displayText: string;
  segments: number;
  cost: number;
  currency: string;
  now: number;
}

/** The outcome is fixed at send time: a forced outcome for the number (test controls), else the magic numbers. */
export function insertMessage(db: Db, m: NewMessage): void {
  const forced = forcedOutcomeFor(db, m.mobileNumber);
  db.prepare(
    `INSERT INTO messages (id, account_id, kind, campaign_id, mobile_number, sender, text, display_text, status, outcome,
       final_delay_ms, segments, cost, currency, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    m.id,
    m.accountId,
    m.kind,
    m.campaignId,
    m.mobileNumber,
    m.sender,
    m.text,
    m.displayText,
    forced?.outcome ?? messageOutcomeFor(m.mobileNumber),
    forced?.final_delay_ms ?? null,
    m.segments,
    m.cost,
    m.currency,
    m.now,
    m.now,
  );
}

export function historyOf(db: Db, subjectId: string): { status: string; at: string }[] {
  const rows = db.prepare('SELECT status, at FROM status_history WHERE subject_id = ? ORDER BY seq').all(subjectId) as {
    status: string;
    at: number;
  }[];
  return rows.map((r) => ({ status: r.status, at: timestampOf(r.at) }));
}

export function messageJson(row: MessageRow, history?: { status: string; at: string }[]): MessageRecord {
  return {
    id: row.id,
    kind: row.kind,
    campaign_id: row.campaign_id,
    mobile_number: `+${row.mobile_number}`,
    sender: row.sender,
    message: row.display_text,
    status: row.status,
    segments: row.segments,
    cost: row.cost,
    currency: row.currency,
    created_at: timestampOf(row.created_at),
    updated_at: timestampOf(row.updated_at),
    ...(history ? { history: history as MessageRecord['history'] } : {}),
  };
}

export function campaignJson(db: Db, row: CampaignRow): CampaignRecord {
  const counts: Record<string, number> = {};
  const rows = db
    .prepare('SELECT status, COUNT(*) AS n FROM messages WHERE campaign_id = ? GROUP BY status')
    .all(row.id) as {
    status: string;
    n: number;
  }[];
  for (const { status, n } of rows) counts[status] = n;
  const finished = rows.filter((r) => isFinalStatus(r.status)).reduce((sum, r) => sum + r.n, 0);
  const queued = counts.queued ?? 0;
  return {
    id: row.id,
    sender: row.sender,
    message: row.message,
    status: finished === row.recipients ? 'completed' : queued === row.recipients ? 'queued' : 'sending',
    recipients: row.recipients,
    segments: row.segments,
    cost: row.cost,
    currency: row.currency,
    counts,
    created_at: timestampOf(row.created_at),
  };
}
