/** API keys: create with chosen scopes (the secret shown once, with a copy button), list by prefix, revoke. */
import type { Router } from 'express';
import { CreateTokenRequest } from '../../../api/admin.js';
import { SCOPES } from '../../../api/scopes.js';
import { type AccountRow, createToken, listTokens, revokeToken, tokenJson } from '../../accounts.js';
import type { SandboxContext } from '../../context.js';
import { validate } from '../../http/body.js';
import { ApiError } from '../../http/errors.js';
import { type Html, html } from '../html.js';
import { accountFrom, action, checkedValues, page, type PageResult, text } from '../kit.js';
import { accountUrl, csrfField, dataTable, postButton, when } from '../layout.js';
import type { Session } from '../session.js';

function keysPage(ctx: SandboxContext, account: AccountRow, session: Session, created?: Html): PageResult {
  const tokens = listTokens(ctx.db, account.id).map(tokenJson);
  const url = accountUrl(account.id, '/keys');
  return {
    title: 'API keys',
    account,
    tab: 'keys',
    body: html`<h1>API keys</h1>
      ${created}
      ${dataTable(
        html`API keys of ${account.name}, newest first (secrets are never stored, only their first characters)`,
        ['Name', 'Prefix', 'Scopes', 'Created', 'Last used', 'State'],
        tokens.map(
          (t) =>
            html`<tr data-token="${t.id}">
              <td>${t.name ?? html`<span class="muted">unnamed</span>`}</td>
              <td><code>${t.prefix ? `${t.prefix}…` : '(older key)'}</code></td>
              <td>${t.scopes.join(', ')}</td>
              <td>${when(t.created_at)}</td>
              <td>${when(t.last_used_at)}</td>
              <td>
                ${
                  t.revoked_at
                    ? html`revoked ${when(t.revoked_at)}`
                    : postButton(session, `${url}/${encodeURIComponent(t.id)}/revoke`, 'Revoke', {
                        danger: true,
                        name: `Revoke key ${t.name ?? t.prefix ?? t.id}`,
                      })
                }
              </td>
            </tr>`,
        ),
      )}
      <section class="card" aria-labelledby="new-key">
        <h2 id="new-key">New API key</h2>
        <form class="stack" method="post" action="${url}">
          ${csrfField(session)}
          <div>
            <label for="key-name">Name</label><br /><input id="key-name" name="name" type="text" maxlength="200" />
          </div>
          <fieldset>
            <legend>Scopes</legend>
            ${SCOPES.map((s) => html`<label><input type="checkbox" name="scopes" value="${s}" /> ${s}</label> `)}
          </fieldset>
          <div><button type="submit">Create key</button></div>
        </form>
      </section>`,
  };
}

export function registerKeyPages(router: Router, ctx: SandboxContext): void {
  router.get(
    '/accounts/:accountId/keys',
    page(ctx, ({ req, session }) => keysPage(ctx, accountFrom(ctx, req), session)),
  );

  router.post(
    '/accounts/:accountId/keys',
    action(
      ctx,
      (req) => accountUrl(String(req.params.accountId), '/keys'),
      ({ req, session }, form) => {
        const account = accountFrom(ctx, req);
        const name = text(form, 'name');
        const input = validate(
          CreateTokenRequest,
          { scopes: checkedValues(form, 'scopes'), ...(name ? { name } : {}) },
          'body',
        );
        const token = createToken(ctx.db, account.id, { ...input, now: ctx.now() });
        // The one time the secret exists outside the caller's hands: this answer only, never stored or cached.
        const created = html`<section class="secret" role="status" aria-labelledby="secret-title">
          <h2 id="secret-title">Your new API key</h2>
          <p>Copy it now: it is shown only this once.</p>
          <p>
            <code id="new-secret">${token.token}</code>
            <button type="button" class="secondary" data-copy="new-secret" hidden>Copy</button>
          </p>
        </section>`;
        return { page: keysPage(ctx, account, session, created) };
      },
    ),
  );

  router.post(
    '/accounts/:accountId/keys/:tokenId/revoke',
    action(
      ctx,
      (req) => accountUrl(String(req.params.accountId), '/keys'),
      ({ req }) => {
        const account = accountFrom(ctx, req);
        const owned = listTokens(ctx.db, account.id).some((t) => t.id === req.params.tokenId);
        if (!owned || !revokeToken(ctx.db, String(req.params.tokenId), ctx.now()))
          throw new ApiError('not_found', 'This account has no such key');
        return { to: accountUrl(account.id, '/keys'), flash: { kind: 'ok', text: 'Key revoked.' } };
      },
    ),
  );
}
