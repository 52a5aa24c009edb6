/**
 * The webhooks area: endpoints with their event filter and batch setting, signing-secret rotation (the new
 * secret shown once), deleting an endpoint. Changes go through the v1 webhook handlers.
 */
import type { Request, Router } from 'express';
import { PER_PAGE_MAX } from '../../../api/common.js';
import { EVENT_KINDS } from '../../../api/events.js';
import { routes } from '../../../api/routes.js';
import type { WebhookEndpoint } from '../../../api/webhooks.js';
import type { AccountRow } from '../../accounts.js';
import type { SandboxContext } from '../../context.js';
import {
  rotateWebhookSecret,
  webhookCreate,
  webhookDelete,
  webhookList,
  webhookUpdate,
} from '../../handlers/webhooks.js';
import type { Page } from '../../handlers/pagination.js';
import { validate } from '../../http/body.js';
import { type Html, html } from '../html.js';
import { accountFrom, action, checked, checkedValues, page, type PageResult, text } from '../kit.js';
import { accountUrl, csrfField, postButton, when } from '../layout.js';
import type { Session } from '../session.js';
import { call } from '../v1-calls.js';

function eventBoxes(idPrefix: string, selected: string[]): Html {
  return html`${EVENT_KINDS.map(
    (kind) =>
      html`<label
        ><input
          type="checkbox"
          name="events"
          value="${kind}"
          id="${idPrefix}-${kind}"
          ${selected.includes(kind) ? html` checked` : ''}
        />
        ${kind}</label
      > `,
  )}`;
}

function secretBox(title: string, secret: string): Html {
  return html`<section class="secret" role="status" aria-labelledby="secret-title">
    <h2 id="secret-title">${title}</h2>
    <p>Copy it now: it is shown only this once. Receivers verify signatures with it (Standard Webhooks).</p>
    <p>
      <code id="new-secret">${secret}</code>
      <button type="button" class="secondary" data-copy="new-secret" hidden>Copy</button>
    </p>
  </section>`;
}

function webhooksPage(ctx: SandboxContext, account: AccountRow, session: Session, shown?: Html): PageResult {
  const endpoints = (
    webhookList(call<'webhookList'>(ctx, account, { per_page: PER_PAGE_MAX })) as Page<WebhookEndpoint>
  ).data;
  const url = accountUrl(account.id, '/webhooks');
  return {
    title: 'Webhooks',
    account,
    tab: 'webhooks',
    body: html`<h1>Webhooks</h1>
      ${shown}
      <p>
        Deliveries are ${account.webhooks_paused ? html`<strong>paused</strong>` : 'running'} (see
        <a href="${accountUrl(account.id, '/testing')}">Test controls</a>).
      </p>
      ${endpoints.length === 0 ? html`<p>No endpoints yet.</p>` : ''}
      ${endpoints.map((e) => {
        const all = e.events.includes('*');
        const base = `${url}/${encodeURIComponent(e.id)}`;
        return html`<section class="card" aria-labelledby="ep-${e.id}">
          <h2 id="ep-${e.id}"><code>${e.url}</code></h2>
          <p class="muted">
            ${e.id} · created ${when(e.created_at)} · ${all ? 'all events' : e.events.join(', ')} · batch deliveries
            ${e.batch ? 'on' : 'off'}
          </p>
          <form class="stack" method="post" action="${base}">
            ${csrfField(session)}
            <div>
              <label for="url-${e.id}">Endpoint URL</label><br />
              <input id="url-${e.id}" name="url" type="url" required size="60" value="${e.url}" />
            </div>
            <fieldset>
              <legend>Events (none ticked: all events)</legend>
              ${eventBoxes(`ev-${e.id}`, all ? [] : e.events)}
            </fieldset>
            <div>
              <label
                ><input type="checkbox" name="batch" value="on" ${e.batch ? html` checked` : ''} /> Batch deliveries
                (message.status.batch)</label
              >
            </div>
            <div><button type="submit">Save endpoint</button></div>
          </form>
          <p>
            ${postButton(session, `${base}/rotate-secret`, 'Rotate signing secret', { name: `Rotate signing secret of ${e.url}` })}
            ${postButton(session, `${base}/delete`, 'Delete endpoint', { danger: true, name: `Delete endpoint ${e.url}` })}
          </p>
        </section>`;
      })}
      <section class="card" aria-labelledby="new-endpoint">
        <h2 id="new-endpoint">New endpoint</h2>
        <form class="stack" method="post" action="${url}">
          ${csrfField(session)}
          <div>
            <label for="endpoint-url">URL</label><br /><input
              id="endpoint-url"
              name="url"
              type="url"
              required
              size="60"
              placeholder="https://example.test/webhooks"
            />
          </div>
          <fieldset>
            <legend>Events (none ticked: all events)</legend>
            ${eventBoxes('new-ev', [])}
          </fieldset>
          <div>
            <label><input type="checkbox" name="batch" value="on" /> Batch deliveries (message.status.batch)</label>
          </div>
          <div><button type="submit">Add endpoint</button></div>
        </form>
      </section>`,
  };
}

function eventsOf(form: Record<string, unknown>): string[] {
  const events = checkedValues(form, 'events');
  return events.length === 0 ? ['*'] : events;
}

export function registerWebhookPages(router: Router, ctx: SandboxContext): void {
  const back = (req: Request) => accountUrl(String(req.params.accountId), '/webhooks');

  router.get(
    '/accounts/:accountId/webhooks',
    page(ctx, ({ req, session }) => webhooksPage(ctx, accountFrom(ctx, req), session)),
  );

  router.post(
    '/accounts/:accountId/webhooks',
    action(ctx, back, ({ req, session }, form) => {
      const account = accountFrom(ctx, req);
      const body = validate(
        routes.webhookCreate.body,
        { url: text(form, 'url'), events: eventsOf(form), batch: checked(form, 'batch') },
        'body',
      );
      const created = webhookCreate(call<'webhookCreate'>(ctx, account, undefined, {}, body)) as { secret: string };
      return {
        page: webhooksPage(ctx, account, session, secretBox("The new endpoint's signing secret", created.secret)),
      };
    }),
  );

  router.post(
    '/accounts/:accountId/webhooks/:webhookId',
    action(ctx, back, ({ req }, form) => {
      const account = accountFrom(ctx, req);
      const body = validate(
        routes.webhookUpdate.body,
        { url: text(form, 'url'), events: eventsOf(form), batch: checked(form, 'batch') },
        'body',
      );
      webhookUpdate(call<'webhookUpdate'>(ctx, account, undefined, { id: String(req.params.webhookId) }, body));
      return { to: back(req), flash: { kind: 'ok', text: 'Endpoint saved.' } };
    }),
  );

  router.post(
    '/accounts/:accountId/webhooks/:webhookId/rotate-secret',
    action(ctx, back, ({ req, session }) => {
      const account = accountFrom(ctx, req);
      const secret = rotateWebhookSecret(ctx.db, account.id, String(req.params.webhookId), ctx.now());
      const box = secretBox('The new signing secret (the previous one keeps signing for 24 hours)', secret);
      return { page: webhooksPage(ctx, account, session, box) };
    }),
  );

  router.post(
    '/accounts/:accountId/webhooks/:webhookId/delete',
    action(ctx, back, ({ req }) => {
      const account = accountFrom(ctx, req);
      webhookDelete(call<'webhookDelete'>(ctx, account, undefined, { id: String(req.params.webhookId) }));
      return { to: back(req), flash: { kind: 'ok', text: 'Endpoint deleted.' } };
    }),
  );
}
