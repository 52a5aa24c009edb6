/** Number lookups (POST /lookup, GET /lookups, GET /lookup/{id}) and POST /email/verify; each is charged. */
import type { EmailVerification, Lookup } from '../../api/checks.js';
import { lookupNumber, verifyEmail } from '../checks.js';
import { notFound } from '../http/errors.js';
import type { Handler } from '../http/pipeline.js';
import { newId } from '../ids.js';
import { timestampOf } from '../time.js';
import { applyCharges, assertCanSpend } from '../wallet.js';
import { pageOf } from './pagination.js';

export const lookupCreate: Handler<'lookupCreate'> = ({ ctx, account, body, now }) => {
  const { db, options } = ctx;
  const cost = options.prices.lookup;
  assertCanSpend(db, account, cost, now);
  const lookup: Lookup = {
    id: newId('lkp'),
    number: body.number,
    ...lookupNumber(body.number),
    cost,
    currency: account.currency,
    created_at: timestampOf(now),
  };
  db.prepare('INSERT INTO lookups (id, account_id, body, created_at) VALUES (?, ?, ?, ?)').run(
    lookup.id,
    account.id,
    JSON.stringify(lookup),
    now,
  );
  applyCharges(
    db,
    account,
    [{ kind: 'lookup', amount: cost, reference: lookup.id, recipient: lookup.e164 }],
    null,
    now,
  );
  return lookup;
};

export const lookupList: Handler<'lookupList'> = ({ ctx, account, query }) =>
  pageOf(
    { ctx, accountId: account.id, list: 'lookups', cursor: query.cursor, perPage: query.per_page },
    (before, limit) =>
      ctx.db
        .prepare('SELECT seq, body FROM lookups WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?')
        .all(account.id, before, limit) as { seq: number; body: string }[],
    (row) => JSON.parse(row.body) as Lookup,
  );

export const lookupGet: Handler<'lookupGet'> = ({ ctx, account, params }) => {
  const row = ctx.db.prepare('SELECT body FROM lookups WHERE id = ? AND account_id = ?').get(params.id, account.id) as
    { body: string } | undefined;
  if (!row) throw notFound('lookup');
  return JSON.parse(row.body) as Lookup;
};

export const emailVerify: Handler<'emailVerify'> = ({ ctx, account, body, now }): EmailVerification => {
  const { db, options } = ctx;
  const cost = options.prices.email_verification;
  assertCanSpend(db, account, cost, now);
  applyCharges(
    db,
    account,
    [{ kind: 'email_verification', amount: cost, reference: null, recipient: body.email }],
    null,
    now,
  );
  return { email: body.email, ...verifyEmail(body.email), cost, currency: account.currency };
};
