/** The page frame (header, account navigation, flash message) and the small view helpers every page uses. */
import { type Html, html } from './html.js';
import type { Flash, Session } from './session.js';
import { CONSOLE_BASE } from './base.js';

export const BASE = CONSOLE_BASE;

export interface PageFrame {
  title: string;
  session: Session;
  /** The account whose pages the navigation lists, and which of them this is. */
  account?: { id: string; name: string; current: AccountTab };
  /** Refresh this page's live regions when the sandbox's data changes after this version (see live.ts). */
  live?: string | undefined;
  flash?: Flash | undefined;
  body: Html;
}

export const ACCOUNT_TABS = [
  ['overview', '', 'Overview'],
  ['messages', '/messages', 'Messages'],
  ['deliveries', '/deliveries', 'Webhook deliveries'],
  ['campaigns', '/campaigns', 'Campaigns'],
  ['keys', '/keys', 'API keys'],
  ['webhooks', '/webhooks', 'Webhooks'],
  ['settings', '/settings', 'Settings'],
  ['wallet', '/wallet', 'Wallet'],
  ['testing', '/testing', 'Test controls'],
] as const;
export type AccountTab = (typeof ACCOUNT_TABS)[number][0];

export function accountUrl(accountId: string, suffix = ''): string {
  return `${BASE}/accounts/${encodeURIComponent(accountId)}${suffix}`;
}

export function layout(frame: PageFrame): string {
  const { account } = frame;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · msgflow sandbox console</title>
<link rel="stylesheet" href="${BASE}/static/console.css">
<script src="${BASE}/static/console.js" defer></script>
</head>
<body${frame.live !== undefined ? html` data-live="${BASE}/live?since=${encodeURIComponent(frame.live)}"` : ''}>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="${BASE}">msgflow sandbox console</a>
  <a href="${BASE}">Accounts</a>
  <a href="${BASE}/inbox">Phone inbox</a>
  ${frame.session.signedIn && html`<form class="inline" method="post" action="${BASE}/sign-out">${csrfField(frame.session)}<button class="secondary" type="submit">Sign out</button></form>`}
</header>
${account && accountNav(account)}
<main id="main" tabindex="-1">
${frame.flash && html`<div class="flash ${frame.flash.kind}" role="${frame.flash.kind === 'error' ? 'alert' : 'status'}">${frame.flash.text}</div>`}
${frame.body}
</main>
</body>
</html>
`.value;
}

function accountNav(account: NonNullable<PageFrame['account']>): Html {
  return html`<nav class="account" aria-label="Account ${account.name}">
    <ul>
      ${ACCOUNT_TABS.map(
        ([tab, suffix, label]) =>
          html`<li>
            <a href="${accountUrl(account.id, suffix)}" ${tab === account.current ? html` aria-current="page"` : ''}
              >${label}</a
            >
          </li>`,
      )}
    </ul>
  </nav>`;
}

export function csrfField(session: Session): Html {
  return html`<input type="hidden" name="_csrf" value="${session.csrf}" />`;
}

/** A one-button form posting to `action` (revoke, redeliver, …). */
export function postButton(
  session: Session,
  action: string,
  label: string,
  options: { danger?: boolean; fields?: Record<string, string>; name?: string } = {},
): Html {
  const fields = Object.entries(options.fields ?? {}).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
  );
  return html`<form class="inline" method="post" action="${action}">
    ${csrfField(session)}${fields}<button
      type="submit"
      ${options.danger ? html` class="danger"` : ''}${options.name ? html` aria-label="${options.name}"` : ''}
    >
      ${label}
    </button>
  </form>`;
}

export function statusBadge(status: string): Html {
  return html`<span class="status ${status}">${status.replace('_', ' ')}</span>`;
}

/** ISO timestamp, shown without its milliseconds in a <time>. */
export function when(timestamp: string | null | undefined): Html {
  if (!timestamp) return html`<span class="muted">never</span>`;
  return html`<time datetime="${timestamp}">${timestamp.replace('T', ' ').replace(/\.\d+/, '')}</time>`;
}

/** A data table: its caption, a heading per column, and one `<tr>` per row. */
export function dataTable(caption: Html | string, headings: readonly string[], rows: Html[]): Html {
  return html`<table>
    <caption>
      ${caption}
    </caption>
    <thead>
      <tr>
        ${headings.map((heading) => html`<th scope="col">${heading}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}
