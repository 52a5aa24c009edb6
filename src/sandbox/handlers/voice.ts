/** POST /voice/send and GET /voice/{id}: text-to-speech calls walked through by the carrier. */
import type { VoiceCall } from '../../api/voice.js';
import { voiceOutcomeFor } from '../carrier.js';
import { notFound } from '../http/errors.js';
import type { Handler } from '../http/pipeline.js';
import { newId } from '../ids.js';
import { timestampOf } from '../time.js';
import { applyCharges, assertCanSpend } from '../wallet.js';
import { assertSenderApproved } from './sms.js';

interface CallRow {
  id: string;
  mobile_number: string;
  status: VoiceCall['status'];
  duration_seconds: number;
  cost: number;
  currency: string;
  created_at: number;
  updated_at: number;
}

function callJson(row: CallRow): VoiceCall {
  return {
    id: row.id,
    mobile_number: `+${row.mobile_number}`,
    status: row.status,
    duration_seconds: row.duration_seconds,
    cost: row.cost,
    currency: row.currency,
    created_at: timestampOf(row.created_at),
    updated_at: timestampOf(row.updated_at),
  };
}

export const voiceSend: Handler<'voiceSend'> = ({ ctx, account, body, idempotencyKey, now }) => {
  const { db, options } = ctx;
  if (body.sender !== undefined) assertSenderApproved(db, account.id, body.sender);
  const cost = options.prices.voice_call;
  assertCanSpend(db, account, cost, now);
  const id = newId('call');
  db.prepare(
    `INSERT INTO voice_calls (id, account_id, mobile_number, sender, message, language, repeat, status, outcome,
       duration_seconds, cost, currency, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, 0, ?, ?, ?, ?)`,
  ).run(
    id,
    account.id,
    body.recipient,
    body.sender ?? '',
    body.message,
    body.language,
    body.repeat,
    voiceOutcomeFor(body.recipient),
    cost,
    account.currency,
    now,
    now,
  );
  ctx.carrier.start('voice', id, now);
  applyCharges(
    db,
    account,
    [{ kind: 'voice', amount: cost, reference: id, recipient: `+${body.recipient}` }],
    idempotencyKey,
    now,
  );
  return callJson(db.prepare('SELECT * FROM voice_calls WHERE id = ?').get(id) as CallRow);
};

export const voiceGet: Handler<'voiceGet'> = ({ ctx, account, params }) => {
  const row = ctx.db.prepare('SELECT * FROM voice_calls WHERE id = ? AND account_id = ?').get(params.id, account.id) as
    CallRow | undefined;
  if (!row) throw notFound('voice call');
  return callJson(row);
};
