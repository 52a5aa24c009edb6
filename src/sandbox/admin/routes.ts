/**
 * The admin API under /admin: the account "dashboard" the spec leaves to the provider's website
 * (accounts, tokens, IP allowlist, senders, wallet, spend cap, rate limit), plus an inbox and the ledger
 * for tests. Bearer admin token; same `data` envelope and error body as /v1.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import type { z } from 'zod';
import {
  AddSenderRequest,
  CreateAccountRequest,
  CreateTokenRequest,
  CreditRequest,
  DeliveryListQuery,
  ForcedOutcomeRequest,
  type InboxEntry,
  InboxQuery,
  IpAllowlistRequest,
  RateLimitRequest,
  SpendCapRequest,
  WebhooksPausedRequest,
  ServerErrorsRequest,
} from '../../api/admin.js';
import { RecipientNumber } from '../../api/common.js';
import {
  accountJson,
  addSender,
  createToken,
  getAccount,
  insertAccount,
  listAccounts,
  listTokens,
  revokeToken,
  tokenJson,
  setIpAllowlist,
  setRateLimit,
  setSpendCap,
} from '../accounts.js';
import { signInLink } from '../console/session.js';
import type { SandboxContext } from '../context.js';
import { accountOfDelivery, getDelivery, listDeliveries } from '../deliveries.js';
import { bearerToken } from '../http/auth.js';
import { jsonBodyParser, validate } from '../http/body.js';
import { ApiError } from '../http/errors.js';
import { timestampOf } from '../time.js';
import {
  clearForcedOutcome,
  listForcedOutcomes,
  redeliver,
  resetAccount,
  setForcedOutcome,
  setWebhooksPaused,
} from '../test-controls.js';
import { credit, ledgerOf } from '../wallet.js';

type AdminHandler = (req: Request, body: unknown) => { status: number; data?: unknown };

export function adminRouter(ctx: SandboxContext): Router {
  const router = express.Router();
  const parseJson = jsonBodyParser(ctx.options.bodyLimitBytes);
  const { db } = ctx;
  const expectedHash = sha256(ctx.options.adminToken);

  const requireAdmin = (req: Request) => {
    const given = bearerToken(req);
    // Compare digests so the comparison takes the same time whatever the token's length.
    if (!given || !timingSafeEqual(sha256(given), expectedHash)) {
      throw new ApiError('unauthorized', 'Send the admin token as Authorization: Bearer <ADMIN_TOKEN>', undefined, {
        'WWW-Authenticate': 'Bearer realm="admin"',
      });
    }
  };

  const accountOf = (req: Request) => {
    const account = getAccount(db, String(req.params.id));
    if (!account) throw new ApiError('not_found', 'No account with this id');
    return account;
  };

  const on = (
    method: 'get' | 'post' | 'put' | 'delete',
    path: string,
    schema: z.ZodType | null,
    handler: AdminHandler,
  ) => {
    router[method](path, async (req: Request, res: Response) => {
      requireAdmin(req);
      let body: unknown;
      if (schema) {
        await parseJson(req, res);
        body = validate(schema, req.body, 'body');
      }
      const result = db.transaction(() => handler(req, body))();
      if (result.data === undefined) res.status(result.status).end();
      else res.status(result.status).json({ data: result.data });
    });
  };

  on('post', '/accounts', CreateAccountRequest, (_req, body) => {
    const input = body as z.output<typeof CreateAccountRequest>;
    const now = ctx.now();
    const account = insertAccount(db, { name: input.name, currency: input.currency, now });
    if (input.balance > 0) credit(db, account.id, input.balance, now);
    return { status: 201, data: accountJson(getAccount(db, account.id)!) };
  });

  on('get', '/accounts/:id', null, (req) => ({ status: 200, data: accountJson(accountOf(req)) }));

  on('post', '/accounts/:id/tokens', CreateTokenRequest, (req, body) => {
    const input = body as z.output<typeof CreateTokenRequest>;
    return { status: 201, data: createToken(db, accountOf(req).id, { ...input, now: ctx.now() }) };
  });

  on('delete', '/tokens/:id', null, (req) => {
    if (!revokeToken(db, String(req.params.id), ctx.now())) throw new ApiError('not_found', 'No token with this id');
    return { status: 204 };
  });

  on('put', '/accounts/:id/ip-allowlist', IpAllowlistRequest, (req, body) => {
    const { addresses } = body as z.output<typeof IpAllowlistRequest>;
    setIpAllowlist(db, accountOf(req).id, addresses);
    return { status: 200, data: { addresses } };
  });

  on('post', '/accounts/:id/senders', AddSenderRequest, (req, body) => {
    const { sender } = body as z.output<typeof AddSenderRequest>;
    addSender(db, accountOf(req).id, sender);
    return { status: 201, data: { sender } };
  });

  on('post', '/accounts/:id/credit', CreditRequest, (req, body) => {
    const { amount } = body as z.output<typeof CreditRequest>;
    const account = accountOf(req);
    credit(db, account.id, amount, ctx.now());
    return { status: 200, data: accountJson(getAccount(db, account.id)!) };
  });

  on('put', '/accounts/:id/spend-cap', SpendCapRequest, (req, body) => {
    const { amount } = body as z.output<typeof SpendCapRequest>;
    setSpendCap(db, accountOf(req).id, amount);
    return { status: 200, data: { amount } };
  });

  on('put', '/accounts/:id/rate-limit', RateLimitRequest, (req, body) => {
    const { per_minute } = body as z.output<typeof RateLimitRequest>;
    setRateLimit(db, accountOf(req).id, per_minute);
    return { status: 200, data: { per_minute } };
  });

  on('get', '/accounts/:id/ledger', null, (req) => ({ status: 200, data: ledgerOf(db, accountOf(req).id) }));

  on('get', '/accounts', null, () => ({ status: 200, data: listAccounts(db).map(accountJson) }));

  on('get', '/accounts/:id/tokens', null, (req) => ({
    status: 200,
    data: listTokens(db, accountOf(req).id).map(tokenJson),
  }));

  on('get', '/accounts/:id/deliveries', null, (req) => {
    const query = validate(DeliveryListQuery, { ...req.query }, 'query');
    const filter = { messageId: query.message_id, state: query.state, limit: query.limit };
    return { status: 200, data: listDeliveries(db, accountOf(req).id, filter) };
  });

  const deliveryOf = (req: Request) => {
    const id = String(req.params.id);
    const accountId = accountOfDelivery(db, id);
    const delivery = accountId && getDelivery(db, accountId, id);
    if (!accountId || !delivery) throw new ApiError('not_found', 'No webhook delivery with this id');
    return { accountId, delivery };
  };

  on('get', '/deliveries/:id', null, (req) => ({ status: 200, data: deliveryOf(req).delivery }));

  on('post', '/deliveries/:id/redeliver', null, (req) => {
    const { accountId, delivery } = deliveryOf(req);
    if (!redeliver(db, accountId, delivery.id, ctx.now()))
      throw new ApiError('not_found', 'The endpoint of this delivery has been deleted');
    return { status: 202, data: getDelivery(db, accountId, delivery.id) };
  });

  on('put', '/accounts/:id/webhooks-paused', WebhooksPausedRequest, (req, body) => {
    const { paused } = body as z.output<typeof WebhooksPausedRequest>;
    setWebhooksPaused(db, accountOf(req).id, paused);
    return { status: 200, data: { paused } };
  });

  on('put', '/accounts/:id/server-errors', ServerErrorsRequest, (req, body) => {
    const { duration_ms } = body as z.output<typeof ServerErrorsRequest>;
    const until = ctx.now() + duration_ms;
    ctx.serverErrors.set(accountOf(req).id, until);
    return { status: 200, data: { until: duration_ms > 0 ? new Date(until).toISOString() : null } };
  });

  on('post', '/accounts/:id/reset', null, (req) => {
    const { id } = accountOf(req);
    resetAccount(db, id);
    ctx.refusals.forget(id);
    return { status: 204 };
  });

  const numberOf = (req: Request) => validate(RecipientNumber, String(req.params.number), 'path');

  on('get', '/outcomes', null, () => ({
    status: 200,
    data: listForcedOutcomes(db).map((f) => ({ ...f, mobile_number: `+${f.mobile_number}` })),
  }));

  on('put', '/outcomes/:number', ForcedOutcomeRequest, (req, body) => {
    const input = body as z.output<typeof ForcedOutcomeRequest>;
    const digits = numberOf(req);
    setForcedOutcome(db, { mobile_number: digits, ...input });
    return { status: 200, data: { mobile_number: `+${digits}`, ...input } };
  });

  on('delete', '/outcomes/:number', null, (req) => {
    if (!clearForcedOutcome(db, numberOf(req))) throw new ApiError('not_found', 'This number has no forced outcome');
    return { status: 204 };
  });

  // A one-time console sign-in link (ten minutes, single use), for tools that hold the admin token.
  on('post', '/console-links', null, (req) => ({
    status: 201,
    data: { url: signInLink(`${req.protocol}://${req.get('host')}`, ctx.signInCodes) },
  }));

  on('get', '/inbox', null, (req) => {
    const { to } = validate(InboxQuery, { ...req.query }, 'query');
    return { status: 200, data: inboxOf(ctx, to) };
  });

  return router;
}

/** Everything sent to a number (SMS and OTP texts in clear, voice call scripts), newest first; an OTP's code, by text or call, apart. */
export function inboxOf(ctx: SandboxContext, to: string): InboxEntry[] {
  const rows = ctx.db
    .prepare(
      `SELECT id, kind, mobile_number, sender, text, display_text, created_at, seq, 0 AS voice FROM messages WHERE mobile_number = ?
       UNION ALL
       SELECT id, 'voice' AS kind, mobile_number, sender, message AS text, COALESCE(display_message, message) AS display_text, created_at, seq, 1 AS voice FROM voice_calls WHERE mobile_number = ?
       ORDER BY created_at DESC, voice DESC, seq DESC`,
    )
    .all(to, to) as {
    id: string;
    kind: InboxEntry['kind'];
    mobile_number: string;
    sender: string;
    text: string;
    display_text: string;
    created_at: number;
  }[];
  return rows.map((r) => ({
    provider_message_id: r.id,
    kind: r.kind,
    mobile_number: `+${r.mobile_number}`,
    sender: r.sender,
    text: r.text,
    code: r.kind === 'sms' ? null : otpCodeOf(r.text, r.display_text),
    created_at: timestampOf(r.created_at),
  }));
}

/**
 * The code in an OTP text: where the text and its masked form (the code as `*`s, same length) differ.
 * Null if they do not line up (a template that masks nothing).
 */
export function otpCodeOf(text: string, masked: string): string | null {
  if (text.length !== masked.length) return null;
  let start = 0;
  while (start < text.length && text[start] === masked[start]) start += 1;
  let end = start;
  while (end < masked.length && masked[end] === '*' && text[end] !== '*') end += 1;
  return end > start ? text.slice(start, end) : null;
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
