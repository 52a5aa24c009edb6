/** POST /sms/send: one campaign, one message per recipient, cost = recipients × segments × price. */
import { countSegments } from '../../api/segments.js';
import { isSenderApproved } from '../accounts.js';
import type { Db } from '../db.js';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../http/pipeline.js';
import { newId } from '../ids.js';
import { insertMessage } from '../messages.js';
import { applyCharges, assertCanSpend } from '../wallet.js';

export function assertSenderApproved(db: Db, accountId: string, sender: string): void {
  if (!isSenderApproved(db, accountId, sender)) {
    throw new ApiError('sender_not_approved', `The sender "${sender}" is not approved for this account`, [
      { path: 'sender', message: 'not an approved sender' },
    ]);
  }
}

export const smsSend: Handler<'smsSend'> = (call) => {
  const { ctx, account, body, now } = call;
  const { db, options } = ctx;
  assertSenderApproved(db, account.id, body.sender);
  const { encoding, segments } = countSegments(body.message);
  const perMessage = segments * options.prices.sms_segment;
  const cost = perMessage * body.recipients.length;
  assertCanSpend(db, account, cost, now);

  const campaignId = newId('cmp');
  db.prepare(
    `INSERT INTO campaigns (id, account_id, sender, message, recipients, segments, encoding, cost, currency, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    campaignId,
    account.id,
    body.sender,
    body.message,
    body.recipients.length,
    segments,
    encoding,
    cost,
    account.currency,
    now,
  );

  const messages = body.recipients.map((digits) => {
    const id = newId('msg');
    insertMessage(db, {
      id,
      accountId: account.id,
      kind: 'sms',
      campaignId,
      mobileNumber: digits,
      sender: body.sender,
      text: body.message,
      displayText: body.message,
      segments,
      cost: perMessage,
      currency: account.currency,
      now,
    });
    ctx.carrier.start('message', id, now);
    return { provider_message_id: id, mobile_number: `+${digits}`, status: 'queued' as const };
  });
  applyCharges(
    db,
    account,
    messages.map((m) => ({
      kind: 'sms',
      amount: perMessage,
      reference: m.provider_message_id,
      recipient: m.mobile_number,
    })),
    call.idempotencyKey,
    now,
  );
  return { campaign_id: campaignId, status: 'queued', segments, encoding, cost, currency: account.currency, messages };
};
