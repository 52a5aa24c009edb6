/**
 * POST /otp/send and /otp/verify. The code is kept only as an HMAC; it travels as an `otp` message (shown
 * in the inbox in clear, in /messages masked). A verify answers an OtpVerifyResult: `verified` once, then
 * `used`; a wrong code is `invalid` with the attempts left, and the attempt that uses up the last one
 * answers `locked` (as does every later one); after expires_at it is `expired`.
 */
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { OTP_MAX_ATTEMPTS } from '../../api/constants.js';
import type { OtpVerifyResult } from '../../api/otp.js';
import { countSegments } from '../../api/segments.js';
import { notFound } from '../http/errors.js';
import type { Handler } from '../http/pipeline.js';
import { newId } from '../ids.js';
import { insertMessage } from '../messages.js';
import { timestampOf } from '../time.js';
import { applyCharges, assertCanSpend } from '../wallet.js';
import { assertSenderApproved } from './sms.js';

/** Sender used when an OTP request names none: the sandbox's shared verification sender, always allowed. */
export const OTP_DEFAULT_SENDER = 'VERIFY';

function codeHash(key: Buffer, otpId: string, code: string): Buffer {
  return createHmac('sha256', key).update(`${otpId}:${code}`).digest();
}

export const otpSend: Handler<'otpSend'> = ({ ctx, account, body, idempotencyKey, now }) => {
  const { db, options } = ctx;
  const sender = body.sender ?? OTP_DEFAULT_SENDER;
  if (body.sender !== undefined) assertSenderApproved(db, account.id, body.sender);
  const cost = options.prices.otp;
  assertCanSpend(db, account, cost, now);

  const otpId = newId('otp');
  const messageId = newId('msg');
  const code = String(randomInt(0, 10 ** body.length)).padStart(body.length, '0');
  const minutes = Math.ceil(body.expires_in / 60);
  const template =
    body.template ?? `Your verification code is {code}. It expires in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
  const text = template.replaceAll('{code}', code);
  const expiresAt = now + body.expires_in * 1000;

  insertMessage(db, {
    id: messageId,
    accountId: account.id,
    kind: 'otp',
    campaignId: null,
    mobileNumber: body.recipient,
    sender,
    text,
    displayText: template.replaceAll('{code}', '*'.repeat(body.length)),
    segments: countSegments(text).segments,
    cost,
    currency: account.currency,
    now,
  });
  db.prepare(
    'INSERT INTO otps (id, account_id, message_id, code_hash, status, attempts, expires_at, created_at) ' +
      "VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)",
  ).run(otpId, account.id, messageId, codeHash(ctx.otpKey, otpId, code).toString('hex'), expiresAt, now);
  ctx.carrier.start('message', messageId, now);
  applyCharges(
    db,
    account,
    [{ kind: 'otp', amount: cost, reference: messageId, recipient: `+${body.recipient}` }],
    idempotencyKey,
    now,
  );

  return {
    otp_id: otpId,
    provider_message_id: messageId,
    mobile_number: `+${body.recipient}`,
    status: 'pending',
    expires_at: timestampOf(expiresAt),
    cost,
    currency: account.currency,
  };
};

interface OtpRow {
  id: string;
  code_hash: string;
  status: 'pending' | 'verified' | 'locked';
  attempts: number;
  expires_at: number;
}

export const otpVerify: Handler<'otpVerify'> = ({ ctx, account, body, now }): OtpVerifyResult => {
  const { db } = ctx;
  const otp = db
    .prepare('SELECT id, code_hash, status, attempts, expires_at FROM otps WHERE id = ? AND account_id = ?')
    .get(body.otp_id, account.id) as OtpRow | undefined;
  if (!otp) throw notFound('OTP');
  const answer = (status: OtpVerifyResult['status'], attempts = otp.attempts): OtpVerifyResult => ({
    otp_id: otp.id,
    status,
    attempts_remaining: Math.max(0, OTP_MAX_ATTEMPTS - attempts),
  });

  if (otp.status === 'verified') return answer('used');
  if (otp.status === 'locked') return answer('locked');
  if (now >= otp.expires_at) return answer('expired');

  const expected = Buffer.from(otp.code_hash, 'hex');
  if (timingSafeEqual(codeHash(ctx.otpKey, otp.id, body.code), expected)) {
    db.prepare("UPDATE otps SET status = 'verified' WHERE id = ?").run(otp.id);
    return answer('verified');
  }
  const attempts = otp.attempts + 1;
  const locked = attempts >= OTP_MAX_ATTEMPTS;
  db.prepare('UPDATE otps SET attempts = ?, status = ? WHERE id = ?').run(
    attempts,
    locked ? 'locked' : 'pending',
    otp.id,
  );
  return answer(locked ? 'locked' : 'invalid', attempts);
};
