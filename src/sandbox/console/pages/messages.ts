/** Everything sent by an account: messages with a status filter and cursor pages, one message's path, campaigns. */
import type { Router } from 'express';
import { MessageStatus } from '../../../api/events.js';
import type { SandboxContext } from '../../context.js';
import { listDeliveries } from '../../deliveries.js';
import { deliveriesTable, deliveryDetail } from '../delivery-views.js';
import { html } from '../html.js';
import { accountFrom, page } from '../kit.js';
import { accountUrl, dataTable, statusBadge, when } from '../layout.js';
import { campaignsPage, messagesPage, messageWithHistory } from '../v1-calls.js';

export function registerMessagePages(router: Router, ctx: SandboxContext): void {
  router.get(
    '/accounts/:accountId/messages',
    page(ctx, ({ req }) => {
      const account = accountFrom(ctx, req);
      const { query, page: list } = messagesPage(ctx, account, req);
      const url = accountUrl(account.id, '/messages');
      // The filter and page size travel with the cursor (which is only valid for the same filter).
      const kept = {
        ...(query.status ? { status: query.status } : {}),
        ...(typeof req.query.per_page === 'string' ? { per_page: String(query.per_page) } : {}),
      };
      const next = list.next_cursor && `${url}?${new URLSearchParams({ ...kept, cursor: list.next_cursor })}`;
      const newest = `${url}${Object.keys(kept).length > 0 ? `?${new URLSearchParams(kept)}` : ''}`;
      return {
        title: 'Messages',
        account,
        tab: 'messages',
        live: !query.cursor,
        body: html`<h1>Messages</h1>
          <form method="get" action="${url}">
            <label for="status-filter">Status</label>
            <select id="status-filter" name="status">
              <option value="">any</option>
              ${MessageStatus.options.map((s) => html`<option value="${s}" ${s === query.status ? html` selected` : ''}>${s}</option>`)}
            </select>
            <button type="submit">Filter</button>
          </form>
          <div id="message-list" data-live-region>
            ${
              list.data.length === 0
                ? html`<p>No messages${query.status ? html` in the state ${query.status}` : ''}.</p>`
                : dataTable(
                    html`Messages${query.status ? html` in the state ${query.status}` : ''}, newest first`,
                    ['Message', 'Kind', 'To', 'Sender', 'Text', 'Status', 'Created'],
                    list.data.map(
                      (m) =>
                        html`<tr data-message="${m.id}">
                          <td>
                            <a href="${accountUrl(account.id, `/messages/${encodeURIComponent(m.id)}`)}"
                              ><code>${m.id}</code></a
                            >
                          </td>
                          <td>${m.kind}</td>
                          <td>${m.mobile_number}</td>
                          <td>${m.sender}</td>
                          <td>${m.message}</td>
                          <td>${statusBadge(m.status)}</td>
                          <td>${when(m.created_at)}</td>
                        </tr>`,
                    ),
                  )
            }
          </div>
          ${next && html`<p class="pager"><a href="${next}">Older messages</a></p>`}
          ${query.cursor && html`<p class="pager"><a href="${newest}">Newest messages</a></p>`}`,
      };
    }),
  );

  router.get(
    '/accounts/:accountId/messages/:messageId',
    page(ctx, ({ req, session }) => {
      const account = accountFrom(ctx, req);
      const message = messageWithHistory(ctx, account, String(req.params.messageId));
      const deliveries = listDeliveries(ctx.db, account.id, { messageId: message.id, limit: 50 });
      return {
        title: `Message ${message.id}`,
        account,
        tab: 'messages',
        live: true,
        body: html`<h1>Message <code>${message.id}</code></h1>
          <div id="message" data-live-region>
            <dl class="facts">
              <dt>Kind</dt>
              <dd>${message.kind}</dd>
              <dt>To</dt>
              <dd>${message.mobile_number}</dd>
              <dt>Sender</dt>
              <dd>${message.sender}</dd>
              <dt>Text</dt>
              <dd>${message.message}</dd>
              <dt>Status</dt>
              <dd>${statusBadge(message.status)}</dd>
              <dt>Cost</dt>
              <dd>
                ${message.cost} ${message.currency} (${message.segments} segment${message.segments === 1 ? '' : 's'})
              </dd>
              ${
                message.campaign_id &&
                html`<dt>Campaign</dt>
                  <dd><code>${message.campaign_id}</code></dd>`
              }
            </dl>
            <h2>Path to its final state</h2>
            <ol class="path" aria-label="Status history">
              ${(message.history ?? []).map((h) => html`<li>${statusBadge(h.status)} ${when(h.at)}</li>`)}
            </ol>
            <h2>Webhook deliveries</h2>
            ${deliveriesTable(account.id, deliveries, `Deliveries carrying this message's events`)}
            ${deliveries.map(
              (d) =>
                html`<section class="card" aria-label="Delivery ${d.id}">
                  <h3>Delivery <code>${d.id}</code></h3>
                  ${deliveryDetail(session, account.id, d)}
                </section>`,
            )}
          </div>`,
      };
    }),
  );

  router.get(
    '/accounts/:accountId/campaigns',
    page(ctx, ({ req }) => {
      const account = accountFrom(ctx, req);
      const { query, page: list } = campaignsPage(ctx, account, req);
      const url = accountUrl(account.id, '/campaigns');
      return {
        title: 'Campaigns',
        account,
        tab: 'campaigns',
        live: !query.cursor,
        body: html`<h1>Campaigns</h1>
          <div id="campaign-list" data-live-region>
            ${
              list.data.length === 0
                ? html`<p>No campaigns yet.</p>`
                : dataTable(
                    'Campaigns, newest first, with their messages per state',
                    ['Campaign', 'Sender', 'Text', 'Status', 'Recipients', 'Counts', 'Cost', 'Created'],
                    list.data.map(
                      (c) =>
                        html`<tr>
                          <td><code>${c.id}</code></td>
                          <td>${c.sender}</td>
                          <td>${c.message}</td>
                          <td>${statusBadge(c.status)}</td>
                          <td>${c.recipients}</td>
                          <td>
                            ${Object.entries(c.counts)
                              .map(([s, n]) => `${n} ${s}`)
                              .join(', ')}
                          </td>
                          <td>${c.cost} ${c.currency}</td>
                          <td>${when(c.created_at)}</td>
                        </tr>`,
                    ),
                  )
            }
          </div>
          ${list.next_cursor && html`<p class="pager"><a href="${url}?${new URLSearchParams({ cursor: list.next_cursor }).toString()}">Older campaigns</a></p>`}`,
      };
    }),
  );
}
