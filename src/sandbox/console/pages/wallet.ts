/** The wallet: balance, the ledger (newest first) and a top-up. */
import type { Request, Router } from 'express';
import { CreditRequest } from '../../../api/admin.js';
import { getAccount } from '../../accounts.js';
import type { SandboxContext } from '../../context.js';
import { validate } from '../../http/body.js';
import { ApiError } from '../../http/errors.js';
import { credit, ledgerOf } from '../../wallet.js';
import { html } from '../html.js';
import { accountFrom, action, page, wholeNumber } from '../kit.js';
import { accountUrl, csrfField, dataTable, when } from '../layout.js';

const LEDGER_ROWS = 200;

export function registerWalletPages(router: Router, ctx: SandboxContext): void {
  const back = (req: Request) => accountUrl(String(req.params.accountId), '/wallet');

  router.get(
    '/accounts/:accountId/wallet',
    page(ctx, ({ req, session }) => {
      const account = accountFrom(ctx, req);
      const ledger = ledgerOf(ctx.db, account.id).reverse().slice(0, LEDGER_ROWS);
      return {
        title: 'Wallet',
        account,
        tab: 'wallet',
        live: true,
        body: html`<h1>Wallet</h1>
          <div id="wallet" data-live-region>
            <p>Balance: <strong>${getAccount(ctx.db, account.id)!.balance} ${account.currency}</strong> minor units.</p>
            ${dataTable(
              html`Ledger, newest first (at most ${LEDGER_ROWS} entries)`,
              ['Time', 'Kind', 'Amount', 'Balance after', 'Reference', 'Recipient'],
              ledger.map(
                (e) =>
                  html`<tr>
                    <td>${when(e.created_at)}</td>
                    <td>${e.kind}</td>
                    <td>${e.kind === 'credit' ? '+' : '−'}${e.amount}</td>
                    <td>${e.balance_after}</td>
                    <td>${e.reference ? html`<code>${e.reference}</code>` : ''}</td>
                    <td>${e.recipient ?? ''}</td>
                  </tr>`,
              ),
            )}
          </div>
          <section class="card" aria-labelledby="top-up">
            <h2 id="top-up">Top up</h2>
            <form class="stack" method="post" action="${accountUrl(account.id, '/wallet')}">
              ${csrfField(session)}
              <div>
                <label for="amount">Amount in minor units</label><br /><input
                  id="amount"
                  name="amount"
                  type="number"
                  min="1"
                  required
                />
              </div>
              <div><button type="submit">Add to the wallet</button></div>
            </form>
          </section>`,
      };
    }),
  );

  router.post(
    '/accounts/:accountId/wallet',
    action(ctx, back, ({ req }, form) => {
      const account = accountFrom(ctx, req);
      const given = wholeNumber(form, 'amount');
      if (given === null || given === 'invalid') throw new ApiError('validation_failed', 'Give a whole amount');
      const { amount } = validate(CreditRequest, { amount: given }, 'body');
      credit(ctx.db, account.id, amount, ctx.now());
      return { to: back(req), flash: { kind: 'ok', text: `Added ${amount} to the wallet.` } };
    }),
  );
}
