/** Account settings: approved senders, IP allowlist, monthly spend cap, rate limit (checked by the admin schemas). */
import type { Request, Router } from 'express';
import { AddSenderRequest, IpAllowlistRequest, RateLimitRequest, SpendCapRequest } from '../../../api/admin.js';
import { addSender, setIpAllowlist, setRateLimit, setSpendCap } from '../../accounts.js';
import type { SandboxContext } from '../../context.js';
import { validate } from '../../http/body.js';
import { ApiError } from '../../http/errors.js';
import { spentThisMonth } from '../../wallet.js';
import { html } from '../html.js';
import { accountFrom, action, page, text, wholeNumber } from '../kit.js';
import { accountUrl, csrfField, postButton } from '../layout.js';

export function registerSettingsPages(router: Router, ctx: SandboxContext): void {
  const { db } = ctx;
  const back = (req: Request) => accountUrl(String(req.params.accountId), '/settings');

  router.get(
    '/accounts/:accountId/settings',
    page(ctx, ({ req, session }) => {
      const account = accountFrom(ctx, req);
      const url = accountUrl(account.id, '/settings');
      const senders = (
        db.prepare('SELECT sender FROM senders WHERE account_id = ? ORDER BY sender').all(account.id) as {
          sender: string;
        }[]
      ).map((r) => r.sender);
      const addresses = (
        db.prepare('SELECT address FROM ip_allowlist WHERE account_id = ? ORDER BY address').all(account.id) as {
          address: string;
        }[]
      ).map((r) => r.address);
      return {
        title: 'Settings',
        account,
        tab: 'settings',
        body: html`<h1>Settings</h1>
          <section class="card" aria-labelledby="senders">
            <h2 id="senders">Approved senders</h2>
            ${
              senders.length === 0
                ? html`<p>None yet: sends from any sender id are refused (OTP's shared sender excepted).</p>`
                : html`<ul>
                    ${senders.map((s) => html`<li><code>${s}</code></li>`)}
                  </ul>`
            }
            <form class="stack" method="post" action="${url}/senders">
              ${csrfField(session)}
              <div>
                <label for="sender">Sender id</label><br /><input
                  id="sender"
                  name="sender"
                  type="text"
                  required
                  maxlength="15"
                />
              </div>
              <div><button type="submit">Approve sender</button></div>
            </form>
          </section>
          <section class="card" aria-labelledby="allowlist">
            <h2 id="allowlist">IP allowlist</h2>
            <p>
              ${addresses.length === 0 ? 'Empty: requests from any address are allowed.' : `${addresses.length} address${addresses.length === 1 ? '' : 'es'}: only these may call the API with this account's keys.`}
            </p>
            <form class="stack" method="post" action="${url}/ip-allowlist">
              ${csrfField(session)}
              <div>
                <label for="addresses">Addresses, one per line (IPv4 or IPv6; empty allows all)</label><br />
                <textarea id="addresses" name="addresses" rows="4" cols="40">${addresses.join('\n')}</textarea>
              </div>
              <div><button type="submit">Save allowlist</button></div>
            </form>
          </section>
          <section class="card" aria-labelledby="spend-cap">
            <h2 id="spend-cap">Monthly spend cap</h2>
            <p>
              Spent this month: ${spentThisMonth(db, account.id, ctx.now())} ${account.currency} minor units. Cap:
              ${account.spend_cap === null ? 'none' : account.spend_cap}.
            </p>
            <form class="stack" method="post" action="${url}/spend-cap">
              ${csrfField(session)}
              <div>
                <label for="cap">Cap in minor units (empty: no cap)</label><br /><input
                  id="cap"
                  name="amount"
                  type="number"
                  min="0"
                  value="${account.spend_cap ?? ''}"
                />
              </div>
              <div><button type="submit">Save spend cap</button></div>
            </form>
          </section>
          <section class="card" aria-labelledby="rate-limit">
            <h2 id="rate-limit">Rate limit</h2>
            <form class="stack" method="post" action="${url}/rate-limit">
              ${csrfField(session)}
              <div>
                <label for="per-minute">Requests a minute per key</label><br /><input
                  id="per-minute"
                  name="per_minute"
                  type="number"
                  min="1"
                  required
                  value="${account.rate_per_minute ?? ctx.options.defaultRatePerMinute}"
                />
              </div>
              <div><button type="submit">Save rate limit</button></div>
            </form>
            ${account.rate_per_minute === null ? html`<p class="muted">Now the sandbox default (${ctx.options.defaultRatePerMinute}).</p>` : postButton(session, `${url}/rate-limit`, 'Back to the default', { fields: { per_minute: '' } })}
          </section>`,
      };
    }),
  );

  router.post(
    '/accounts/:accountId/settings/senders',
    action(ctx, back, ({ req }, form) => {
      const account = accountFrom(ctx, req);
      const { sender } = validate(AddSenderRequest, { sender: text(form, 'sender') }, 'body');
      addSender(db, account.id, sender);
      return { to: back(req), flash: { kind: 'ok', text: `Sender ${sender} approved.` } };
    }),
  );

  router.post(
    '/accounts/:accountId/settings/ip-allowlist',
    action(ctx, back, ({ req }, form) => {
      const account = accountFrom(ctx, req);
      const lines = text(form, 'addresses').split(/\s+/).filter(Boolean);
      const { addresses } = validate(IpAllowlistRequest, { addresses: lines }, 'body');
      setIpAllowlist(db, account.id, addresses);
      return { to: back(req), flash: { kind: 'ok', text: 'IP allowlist saved.' } };
    }),
  );

  router.post(
    '/accounts/:accountId/settings/spend-cap',
    action(ctx, back, ({ req }, form) => {
      const account = accountFrom(ctx, req);
      const given = wholeNumber(form, 'amount');
      if (given === 'invalid') throw new ApiError('validation_failed', 'The spend cap must be a whole number');
      const { amount } = validate(SpendCapRequest, { amount: given }, 'body');
      setSpendCap(db, account.id, amount);
      return {
        to: back(req),
        flash: { kind: 'ok', text: amount === null ? 'Spend cap removed.' : 'Spend cap saved.' },
      };
    }),
  );

  router.post(
    '/accounts/:accountId/settings/rate-limit',
    action(ctx, back, ({ req }, form) => {
      const account = accountFrom(ctx, req);
      const given = wholeNumber(form, 'per_minute');
      if (given === null) {
        db.prepare('UPDATE accounts SET rate_per_minute = NULL WHERE id = ?').run(account.id);
        return { to: back(req), flash: { kind: 'ok', text: 'Rate limit back to the sandbox default.' } };
      }
      if (given === 'invalid') throw new ApiError('validation_failed', 'The rate limit must be a whole number');
      const { per_minute } = validate(RateLimitRequest, { per_minute: given }, 'body');
      setRateLimit(db, account.id, per_minute);
      return { to: back(req), flash: { kind: 'ok', text: 'Rate limit saved.' } };
    }),
  );
}
