/** POST /voice/send and GET /voice/{id}: text-to-speech calls walked through by the carrier. */
import type { VoiceCall } from '../../api/voice.js';
import { voiceOutcomeFor } from '../carrier.js';
import { notFound } from '../http/errors.js';
import type { Handler } from '../http/pipeline.js';
import type { SandboxContext } from '../context.js';
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
  const id = placeCall(ctx, {
    accountId: account.id,
    ...body,
    sender: body.sender ?? '',
    cost,
    currency: account.currency,
    now,
  });
  applyCharges(
    db,
    account,
    [{ kind: 'voice', amount: cost, reference: id, recipient: `+${body.recipient}` }],
    idempotencyKey,
    now,
  );
  return callJson(db.prepare('SELECT * FROM voice_calls WHERE id = ?').get(id) as CallRow);
};

export interface NewCall {
  accountId: string;
  recipient: string;
  sender: string;
  /** The script read out. */
  message: string;
  /** The script as the inbox's code finder compares it (an OTP call's code masked); defaults to `message`. */
  displayMessage?: string;
  language: string;
  repeat: number;
  cost: number;
  currency: string;
  now: number;
}

/** Records a call and hands it to the carrier; returns its id. The caller charges for it. */
export function placeCall(ctx: SandboxContext, call: NewCall): string {
  const id = newId('call');
  ctx.db
    .prepare(
      `INSERT INTO voice_calls (id, account_id, mobile_number, sender, message, display_message, language, repeat,
         status, outcome, duration_seconds, cost, currency, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, 0, ?, ?, ?, ?)`,
    )
    .run(
      id,
      call.accountId,
      call.recipient,
      call.sender,
      call.message,
      call.displayMessage ?? call.message,
      call.language,
      call.repeat,
      voiceOutcomeFor(call.recipient),
      call.cost,
      call.currency,
      call.now,
      call.now,
    );
  ctx.carrier.start('voice', id, call.now);
  return id;
}

export const voiceGet: Handler<'voiceGet'> = ({ ctx, account, params }) => {
  const row = ctx.db.prepare('SELECT * FROM voice_calls WHERE id = ? AND account_id = ?').get(params.id, account.id) as
    CallRow | undefined;
  if (!row) throw notFound('voice call');
  return callJson(row);
};
