/** Views of webhook deliveries and their attempts, shared by the deliveries pages and a message's page. */
import type { DeliveryRecord } from '../../api/admin.js';
import { type Html, html } from './html.js';
import { accountUrl, dataTable, postButton, statusBadge, when } from './layout.js';
import type { Session } from './session.js';

export function deliveryUrl(accountId: string, deliveryId: string): string {
  return accountUrl(accountId, `/deliveries/${encodeURIComponent(deliveryId)}`);
}

export function deliveriesTable(accountId: string, deliveries: DeliveryRecord[], caption: string): Html {
  if (deliveries.length === 0) return html`<p>No webhook deliveries yet.</p>`;
  return dataTable(
    caption,
    ['Delivery', 'Events', 'State', 'Attempts', 'Last answer', 'Next retry', 'Created'],
    deliveries.map((d) => {
      const last = d.attempts[d.attempts.length - 1];
      return html`<tr data-delivery="${d.id}">
        <td>
          <a href="${deliveryUrl(accountId, d.id)}"><code>${d.id}</code></a>
        </td>
        <td>${d.event_types.join(', ')}</td>
        <td>${statusBadge(d.state)}</td>
        <td>${d.attempts.length}</td>
        <td>${last ? answerOf(last) : html`<span class="muted">none yet</span>`}</td>
        <td>${d.next_attempt_at ? when(d.next_attempt_at) : html`<span class="muted">—</span>`}</td>
        <td>${when(d.created_at)}</td>
      </tr>`;
    }),
  );
}

function answerOf(attempt: DeliveryRecord['attempts'][number]): Html {
  return attempt.status === null ? html`${attempt.error ?? 'no answer'}` : html`HTTP ${attempt.status}`;
}

export function attemptsTable(delivery: DeliveryRecord): Html {
  if (delivery.attempts.length === 0) return html`<p>No attempt yet.</p>`;
  return dataTable(
    html`Attempts of ${delivery.id}`,
    ['#', 'Time', 'HTTP status', 'Latency', 'Error', 'Start of the answer'],
    delivery.attempts.map(
      (a) =>
        html`<tr class="attempt">
          <td>${a.attempt}</td>
          <td>${when(a.at)}</td>
          <td>${a.status ?? html`<span class="muted">none</span>`}</td>
          <td>${a.latency_ms} ms</td>
          <td>${a.error ?? ''}</td>
          <td>${a.response_start ? html`<pre>${a.response_start}</pre>` : html`<span class="muted">empty</span>`}</td>
        </tr>`,
    ),
  );
}

export function deliveryDetail(session: Session, accountId: string, delivery: DeliveryRecord): Html {
  return html`<dl class="facts">
      <dt>State</dt>
      <dd>${statusBadge(delivery.state)}</dd>
      <dt>Endpoint</dt>
      <dd><code>${delivery.url ?? '(deleted)'}</code></dd>
      <dt>Events</dt>
      <dd>${delivery.event_types.join(', ')}</dd>
      <dt>Messages</dt>
      <dd>
        ${delivery.message_ids.map((id, i) => html`${i > 0 ? ', ' : ''}<a href="${accountUrl(accountId, `/messages/${encodeURIComponent(id)}`)}"><code>${id}</code></a>`)}
      </dd>
      <dt>Next retry</dt>
      <dd>${delivery.next_attempt_at ? when(delivery.next_attempt_at) : 'none'}</dd>
      <dt>Created</dt>
      <dd>${when(delivery.created_at)}</dd>
    </dl>
    <p>
      ${postButton(session, `${deliveryUrl(accountId, delivery.id)}/redeliver`, 'Redeliver', { name: `Redeliver ${delivery.id}` })}
    </p>
    ${attemptsTable(delivery)}
    <details>
      <summary>Body sent</summary>
      <pre>${delivery.body}</pre>
    </details>`;
}
