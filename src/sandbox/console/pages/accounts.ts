/** The accounts list (the console's home), creating an account, and an account's overview. */
import type { Router } from 'express';
import { CreateAccountRequest } from '../../../api/admin.js';
import { accountJson, getAccount, insertAccount, listAccounts } from '../../accounts.js';
import type { SandboxContext } from '../../context.js';
import { validate } from '../../http/body.js';
import { spentThisMonth, credit } from '../../wallet.js';
import { type Html, html } from '../html.js';
import type { Refusal } from '../../refusals.js';
import { timestampOf } from '../../time.js';
import { accountFrom, action, page, text, wholeNumber } from '../kit.js';
import { accountUrl, BASE, csrfField, dataTable, when } from '../layout.js';

function refusalsTable(refusals: readonly Refusal[]): Html {
  if (refusals.length === 0)
    return html`<p>No API call of this account has been refused since the sandbox started.</p>`;
  return dataTable(
    html`Why the latest API calls were refused, newest first (kept in memory, the last ${refusals.length})`,
    ['Time', 'Call', 'Status', 'Code', 'Reason'],
    refusals.map(
      (r) =>
        html`<tr class="refusal">
          <td>${when(timestampOf(r.at))}</td>
          <td><code>${r.method} ${r.path}</code></td>
          <td>${r.status}</td>
          <td><code>${r.code}</code></td>
          <td>${r.message}</td>
        </tr>`,
    ),
  );
}

export function registerAccountPages(router: Router, ctx: SandboxContext): void {
  const { db } = ctx;

  router.get(
    '/',
    page(ctx, ({ session }) => {
      const accounts = listAccounts(db).map(accountJson);
      return {
        title: 'Accounts',
        body: html`<h1>Accounts</h1>
          ${dataTable(
            html`${accounts.length} account${accounts.length === 1 ? '' : 's'}, newest first`,
            ['Name', 'Id', 'Balance', 'Created'],
            accounts.map(
              (a) =>
                html`<tr>
                  <td><a href="${accountUrl(a.id)}">${a.name}</a></td>
                  <td><code>${a.id}</code></td>
                  <td>${a.balance} ${a.currency}</td>
                  <td>${when(a.created_at)}</td>
                </tr>`,
            ),
          )}
          <section class="card" aria-labelledby="new-account">
            <h2 id="new-account">New account</h2>
            <form class="stack" method="post" action="${BASE}/accounts">
              ${csrfField(session)}
              <div>
                <label for="account-name">Name</label><br /><input
                  id="account-name"
                  name="name"
                  type="text"
                  required
                  maxlength="200"
                />
              </div>
              <div>
                <label for="account-currency">Currency</label><br /><input
                  id="account-currency"
                  name="currency"
                  type="text"
                  value="USD"
                  pattern="[A-Z]{3}"
                  size="4"
                />
              </div>
              <div>
                <label for="account-balance">Opening balance (minor units)</label><br /><input
                  id="account-balance"
                  name="balance"
                  type="number"
                  min="0"
                  value="0"
                />
              </div>
              <div><button type="submit">Create account</button></div>
            </form>
          </section>`,
      };
    }),
  );

  router.post(
    '/accounts',
    action(
      ctx,
      () => BASE,
      (_visit, form) => {
        const balance = wholeNumber(form, 'balance');
        const input = validate(
          CreateAccountRequest,
          { name: text(form, 'name'), currency: text(form, 'currency') || 'USD', balance: balance ?? 0 },
          'body',
        );
        const now = ctx.now();
        const account = insertAccount(db, { name: input.name, currency: input.currency, now });
        if (input.balance > 0) credit(db, account.id, input.balance, now);
        return { to: accountUrl(account.id), flash: { kind: 'ok', text: `Account ${input.name} created.` } };
      },
    ),
  );

  router.get(
    '/accounts/:accountId',
    page(ctx, ({ req }) => {
      const account = accountFrom(ctx, req);
      const counts = db
        .prepare('SELECT status, COUNT(*) AS n FROM messages WHERE account_id = ? GROUP BY status ORDER BY status')
        .all(account.id) as { status: string; n: number }[];
      const fresh = getAccount(db, account.id)!;
      return {
        title: account.name,
        account,
        tab: 'overview',
        live: true,
        body: html`<h1>${account.name}</h1>
          <div id="overview" data-live-region>
            <dl class="facts">
              <dt>Id</dt>
              <dd><code>${account.id}</code></dd>
              <dt>Balance</dt>
              <dd>${fresh.balance} ${fresh.currency} (minor units)</dd>
              <dt>Spent this month</dt>
              <dd>
                ${spentThisMonth(db, account.id, ctx.now())} of
                ${fresh.spend_cap === null ? 'no cap' : `a cap of ${fresh.spend_cap}`}
              </dd>
              <dt>Rate limit</dt>
              <dd>
                ${fresh.rate_per_minute ?? `${ctx.options.defaultRatePerMinute} (sandbox default)`} requests a minute
                per token
              </dd>
              <dt>Webhook deliveries</dt>
              <dd>${fresh.webhooks_paused ? 'paused' : 'running'}</dd>
              <dt>Messages</dt>
              <dd>${counts.length === 0 ? 'none yet' : counts.map((c) => `${c.n} ${c.status}`).join(', ')}</dd>
              <dt>Created</dt>
              <dd>${when(accountJson(fresh).created_at)}</dd>
            </dl>
            <h2>Recent refusals</h2>
            ${refusalsTable(ctx.refusals.of(account.id))}
          </div>`,
      };
    }),
  );
}
