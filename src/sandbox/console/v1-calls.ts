/**
 * The console works through the API's own handlers (the same validation, filters, cursors and masking of
 * OTP codes as /v1), called directly with the account the page is about: a rule lives in one place.
 */
import type { Request } from 'express';
import { type RouteName, routes } from '../../api/routes.js';
import { SCOPES } from '../../api/scopes.js';
import type { CampaignRecord, MessageRecord } from '../../api/sms.js';
import type { AccountRow } from '../accounts.js';
import type { SandboxContext } from '../context.js';
import { campaignList, messageGet, messageList } from '../handlers/reports.js';
import type { Page } from '../handlers/pagination.js';
import { validate } from '../http/body.js';
import type { Call } from '../http/pipeline.js';

export function call<K extends RouteName>(
  ctx: SandboxContext,
  account: AccountRow,
  query: Call<K>['query'],
  params: Record<string, string> = {},
  body?: Call<K>['body'],
): Call<K> {
  return {
    ctx,
    account,
    token: { id: 'console', account_id: account.id, scopes: [...SCOPES], name: 'console' },
    body: body as Call<K>['body'],
    query,
    params,
    ip: '127.0.0.1',
    idempotencyKey: null,
    now: ctx.now(),
  };
}

/** `status`, `cursor` and `per_page` from the page's query string, checked like the API checks them. */
function listQuery(req: Request) {
  const { status, cursor, per_page } = req.query;
  return validate(
    routes.messageList.query,
    {
      ...(typeof status === 'string' && status !== '' ? { status } : {}),
      ...(typeof cursor === 'string' && cursor !== '' ? { cursor } : {}),
      ...(typeof per_page === 'string' && per_page !== '' ? { per_page } : {}),
    },
    'query',
  );
}

export function messagesPage(ctx: SandboxContext, account: AccountRow, req: Request) {
  const query = listQuery(req);
  return { query, page: messageList(call<'messageList'>(ctx, account, query)) as Page<MessageRecord> };
}

export function messageWithHistory(ctx: SandboxContext, account: AccountRow, id: string): MessageRecord {
  return messageGet(call<'messageGet'>(ctx, account, undefined, { id })) as MessageRecord;
}

export function campaignsPage(ctx: SandboxContext, account: AccountRow, req: Request) {
  const query = listQuery(req);
  return { query, page: campaignList(call<'campaignList'>(ctx, account, query)) as Page<CampaignRecord> };
}
