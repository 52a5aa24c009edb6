/** Webhook endpoint management: POST/GET /webhooks and GET/PATCH/DELETE /webhooks/{id} (scope webhooks). */
import { generateWebhookSecret } from '../../api/signature.js';
import type { WebhookEndpoint, WebhookRegistration } from '../../api/webhooks.js';
import type { Db } from '../db.js';
import { notFound } from '../http/errors.js';
import type { Handler } from '../http/pipeline.js';
import { newId } from '../ids.js';
import { timestampOf } from '../time.js';
import { pageOf } from './pagination.js';

interface WebhookRow {
  seq: number;
  id: string;
  url: string;
  events: string;
  batch: number;
  secret: string;
  created_at: number;
}

function endpointJson(row: WebhookRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    batch: row.batch === 1,
    created_at: timestampOf(row.created_at),
  };
}

function find(db: Db, accountId: string, id: string | undefined): WebhookRow {
  const row = db
    .prepare('SELECT * FROM webhooks WHERE id = ? AND account_id = ? AND deleted_at IS NULL')
    .get(id, accountId) as WebhookRow | undefined;
  if (!row) throw notFound('webhook endpoint');
  return row;
}

export const webhookCreate: Handler<'webhookCreate'> = ({ ctx, account, body, now }): WebhookRegistration => {
  const id = newId('wh');
  const secret = generateWebhookSecret();
  // Omitted `events` means all events (spec Events rule 5), stored as ['*'].
  const events = body.events ?? ['*'];
  ctx.db
    .prepare(
      'INSERT INTO webhooks (id, account_id, url, events, batch, secret, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .run(id, account.id, body.url, JSON.stringify(events), body.batch ? 1 : 0, secret, now);
  return { ...endpointJson(find(ctx.db, account.id, id)), secret };
};

export const webhookList: Handler<'webhookList'> = ({ ctx, account, query }) =>
  pageOf(
    { ctx, accountId: account.id, list: 'webhooks', cursor: query.cursor, perPage: query.per_page },
    (before, limit) =>
      ctx.db
        .prepare(
          'SELECT * FROM webhooks WHERE account_id = ? AND deleted_at IS NULL AND seq < ? ORDER BY seq DESC LIMIT ?',
        )
        .all(account.id, before, limit) as WebhookRow[],
    endpointJson,
  );

export const webhookGet: Handler<'webhookGet'> = ({ ctx, account, params }) =>
  endpointJson(find(ctx.db, account.id, params.id));

export const webhookUpdate: Handler<'webhookUpdate'> = ({ ctx, account, params, body }) => {
  const row = find(ctx.db, account.id, params.id);
  ctx.db
    .prepare('UPDATE webhooks SET url = ?, events = ?, batch = ? WHERE id = ?')
    .run(
      body.url ?? row.url,
      body.events ? JSON.stringify(body.events) : row.events,
      body.batch === undefined ? row.batch : body.batch ? 1 : 0,
      row.id,
    );
  return endpointJson(find(ctx.db, account.id, row.id));
};

/** How long the previous signing secret still signs after a rotation, so receivers can switch over. */
export const SECRET_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * A new signing secret for the endpoint (the dashboard's "rotate"), returned once. For a day both the new and
 * the previous secret sign each delivery (two `v1,` signatures), so a receiver that knows either verifies.
 */
export function rotateWebhookSecret(db: Db, accountId: string, id: string, now: number): string {
  const row = find(db, accountId, id);
  const secret = generateWebhookSecret();
  db.prepare('UPDATE webhooks SET secret = ?, previous_secret = ?, previous_secret_until = ? WHERE id = ?').run(
    secret,
    row.secret,
    now + SECRET_ROTATION_GRACE_MS,
    row.id,
  );
  return secret;
}

/** Deleting stops deliveries too: waiting batch items go, pending deliveries are cancelled by the dispatcher. */
export const webhookDelete: Handler<'webhookDelete'> = ({ ctx, account, params, now }) => {
  const row = find(ctx.db, account.id, params.id);
  ctx.db.prepare('UPDATE webhooks SET deleted_at = ? WHERE id = ?').run(now, row.id);
  ctx.db.prepare('DELETE FROM batch_items WHERE webhook_id = ?').run(row.id);
  return undefined;
};
