/** GET /messages, /messages/{id}, /campaigns, /campaigns/{id} (scope reports). */
import { notFound } from '../http/errors.js';
import type { Handler } from '../http/pipeline.js';
import { type CampaignRow, campaignJson, historyOf, messageJson, type MessageRow } from '../messages.js';
import { pageOf } from './pagination.js';

export const messageList: Handler<'messageList'> = ({ ctx, account, query }) => {
  const status = query.status;
  return pageOf(
    {
      ctx,
      accountId: account.id,
      list: `messages?status=${status ?? ''}`,
      cursor: query.cursor,
      perPage: query.per_page,
    },
    (before, limit) =>
      ctx.db
        .prepare(
          `SELECT * FROM messages WHERE account_id = ? AND seq < ? ${status ? 'AND status = ?' : ''} ` +
            'ORDER BY seq DESC LIMIT ?',
        )
        .all(...[account.id, before, ...(status ? [status] : []), limit]) as MessageRow[],
    (row) => messageJson(row),
  );
};

export const messageGet: Handler<'messageGet'> = ({ ctx, account, params }) => {
  const row = ctx.db.prepare('SELECT * FROM messages WHERE id = ? AND account_id = ?').get(params.id, account.id) as
    MessageRow | undefined;
  if (!row) throw notFound('message');
  return messageJson(row, historyOf(ctx.db, row.id));
};

export const campaignList: Handler<'campaignList'> = ({ ctx, account, query }) => {
  const status = query.status;
  // With a status filter: the campaigns having at least one message in that status.
  const filter = status ? 'AND EXISTS (SELECT 1 FROM messages m WHERE m.campaign_id = c.id AND m.status = ?)' : '';
  return pageOf(
    {
      ctx,
      accountId: account.id,
      list: `campaigns?status=${status ?? ''}`,
      cursor: query.cursor,
      perPage: query.per_page,
    },
    (before, limit) =>
      ctx.db
        .prepare(`SELECT * FROM campaigns c WHERE c.account_id = ? AND c.seq < ? ${filter} ORDER BY c.seq DESC LIMIT ?`)
        .all(...[account.id, before, ...(status ? [status] : []), limit]) as CampaignRow[],
    (row) => campaignJson(ctx.db, row),
  );
};

export const campaignGet: Handler<'campaignGet'> = ({ ctx, account, params }) => {
  const row = ctx.db.prepare('SELECT * FROM campaigns WHERE id = ? AND account_id = ?').get(params.id, account.id) as
    CampaignRow | undefined;
  if (!row) throw notFound('campaign');
  return campaignJson(ctx.db, row);
};
