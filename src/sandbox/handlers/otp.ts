/**
 * POST /otp/send and /otp/verify. A code travels as an `otp` message (shown in the inbox in clear, in /messages
 * masked) or as a voice call reading it out (`channel: "voice"`); with `otp_id`, the pending code of that OTP
 * is delivered again over the channel asked for (same code, expiry and attempts). The code is kept as an HMAC
 * for verifying, and sealed with the sandbox's OTP key for delivering again. A verify answers an
 * OtpVerifyResult: `verified` once, then `used`; a wrong code is `invalid` with the attempts left, and the
 * attempt that uses up the last one answers `locked` (as does every later one); after expires_at it is `expired`.
 */
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import { OTP_MAX_ATTEMPTS } from '../../api/constants.js';
import type { OtpSendRequest, OtpSendResult, OtpVerifyResult } from '../../api/otp.js';
import { countSegments } from '../../api/segments.js';
import { type KeyRing, openString, sealString } from '../../crypto/keyring.js';
import type { SandboxContext } from '../context.js';
import { ApiError, notFound } from '../http/errors.js';
import type { Handler } from '../http/pipeline.js';
import { newId } from '../ids.js';
import { insertMessage } from '../messages.js';
import { timestampOf } from '../time.js';
import { applyCharges, assertCanSpend } from '../wallet.js';
import { assertSenderApproved } from './sms.js';
import { placeCall } from './voice.js';

/** Sender used when an OTP request names none: the sandbox's shared verification sender, always allowed. */
export const OTP_DEFAULT_SENDER = 'VERIFY';

function codeHash(key: Buffer, otpId: string, code: string): Buffer {
  return createHmac('sha256', key).update(`${otpId}:${code}`).digest();
}

/** Seals codes for delivering again; derived from the OTP key so the HMAC key is never an encryption key. */
function sealRing(key: Buffer): KeyRing {
  return { currentId: 'otp', keys: new Map([['otp', createHmac('sha256', key).update('otp-code-seal').digest()]]) };
}

/** The code an OTP send delivers: a new one, or the pending one of `otp_id`. */
interface OtpCode {
  otpId: string;
  code: string;
  expiresAt: number;
}

type SendBody = z.output<typeof OtpSendRequest>;

export const otpSend: Handler<'otpSend'> = ({ ctx, account, body, idempotencyKey, now }): OtpSendResult => {
  const { db, options } = ctx;
  if (body.sender !== undefined) assertSenderApproved(db, account.id, body.sender);
  const cost = body.channel === 'voice' ? options.prices.voice_call : options.prices.otp;
  assertCanSpend(db, account, cost, now);

  const otp = body.otp_id ? pendingCode(ctx, account.id, body, now) : newCode(body, now);
  const sender = body.sender ?? OTP_DEFAULT_SENDER;
  const base = { accountId: account.id, recipient: body.recipient, sender, cost, currency: account.currency, now };
  const deliveryId = body.channel === 'voice' ? callCode(ctx, base, otp, body) : textCode(ctx, base, otp, body);
  if (!body.otp_id) {
    db.prepare(
      'INSERT INTO otps (id, account_id, message_id, code_hash, code_sealed, mobile_number, status, attempts, expires_at, created_at) ' +
        "VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)",
    ).run(
      otp.otpId,
      account.id,
      deliveryId,
      codeHash(ctx.otpKey, otp.otpId, otp.code).toString('hex'),
      sealString(sealRing(ctx.otpKey), otp.code),
      body.recipient,
      otp.expiresAt,
      now,
    );
  }
  applyCharges(
    db,
    account,
    [
      {
        kind: body.channel === 'voice' ? 'voice' : 'otp',
        amount: cost,
        reference: deliveryId,
        recipient: `+${body.recipient}`,
      },
    ],
    idempotencyKey,
    now,
  );

  return {
    otp_id: otp.otpId,
    channel: body.channel,
    ...(body.channel === 'voice' ? { call_id: deliveryId } : { provider_message_id: deliveryId }),
    mobile_number: `+${body.recipient}`,
    status: 'pending',
    expires_at: timestampOf(otp.expiresAt),
    cost,
    currency: account.currency,
  };
};

function newCode(body: SendBody, now: number): OtpCode {
  return {
    otpId: newId('otp'),
    code: String(randomInt(0, 10 ** body.length)).padStart(body.length, '0'),
    expiresAt: now + body.expires_in * 1000,
  };
}

/** The code of `otp_id`, when it can still be verified and belongs to this recipient. */
function pendingCode(ctx: SandboxContext, accountId: string, body: SendBody, now: number): OtpCode {
  const row = ctx.db
    .prepare('SELECT id, code_sealed, mobile_number, status, expires_at FROM otps WHERE id = ? AND account_id = ?')
    .get(body.otp_id, accountId) as
    | { id: string; code_sealed: string | null; mobile_number: string | null; status: string; expires_at: number }
    | undefined;
  if (!row) throw notFound('OTP');
  const refuse = (path: string, message: string) =>
    new ApiError('validation_failed', 'The body is not valid', [{ path, message }]);
  if (!row.code_sealed) throw refuse('otp_id', 'this OTP was made before codes could be delivered again');
  if (row.mobile_number !== body.recipient) throw refuse('recipient', 'is not the number this OTP was sent to');
  if (row.status !== 'pending' || now >= row.expires_at) {
    const state = row.status === 'pending' ? 'expired' : row.status;
    throw refuse('otp_id', `this OTP's code can no longer be verified (${state})`);
  }
  return { otpId: row.id, code: openString(sealRing(ctx.otpKey), row.code_sealed), expiresAt: row.expires_at };
}

type Delivery = Omit<Parameters<typeof placeCall>[1], 'message' | 'language' | 'repeat'>;

function minutesText(expiresAt: number, now: number): string {
  const minutes = Math.max(1, Math.ceil((expiresAt - now) / 60_000));
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

function textCode(ctx: SandboxContext, d: Delivery, otp: OtpCode, body: SendBody): string {
  const id = newId('msg');
  const template =
    body.template ?? `Your verification code is {code}. It expires in ${minutesText(otp.expiresAt, d.now)}.`;
  const text = template.replaceAll('{code}', otp.code);
  insertMessage(ctx.db, {
    id,
    accountId: d.accountId,
    kind: 'otp',
    campaignId: null,
    mobileNumber: d.recipient,
    sender: d.sender,
    text,
    displayText: template.replaceAll('{code}', '*'.repeat(otp.code.length)),
    segments: countSegments(text).segments,
    cost: d.cost,
    currency: d.currency,
    now: d.now,
  });
  ctx.carrier.start('message', id, d.now);
  return id;
}

function callCode(ctx: SandboxContext, d: Delivery, otp: OtpCode, body: SendBody): string {
  const template = body.template ?? 'Your verification code is {code}. Once again, your code is {code}.';
  return placeCall(ctx, {
    ...d,
    message: template.replaceAll('{code}', otp.code),
    displayMessage: template.replaceAll('{code}', '*'.repeat(otp.code.length)),
    language: body.language ?? 'en-US',
    repeat: 1,
  });
}

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
