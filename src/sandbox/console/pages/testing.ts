/** Test controls: force a number's outcome, pause or resume webhook deliveries, reset the account's traffic. */
import type { Request, Router } from 'express';
import { ForcedOutcomeRequest } from '../../../api/admin.js';
import { RecipientNumber } from '../../../api/common.js';
import type { SandboxContext } from '../../context.js';
import { validate } from '../../http/body.js';
import { ApiError } from '../../http/errors.js';
import {
  clearForcedOutcome,
  listForcedOutcomes,
  resetAccount,
  setForcedOutcome,
  setWebhooksPaused,
} from '../../test-controls.js';
import { html } from '../html.js';
import { accountFrom, action, page, text, wholeNumber } from '../kit.js';
import { accountUrl, csrfField, postButton } from '../layout.js';

export function registerTestingPages(router: Router, ctx: SandboxContext): void {
  const { db } = ctx;
  const back = (req: Request) => accountUrl(String(req.params.accountId), '/testing');

  router.get(
    '/accounts/:accountId/testing',
    page(ctx, ({ req, session }) => {
      const account = accountFrom(ctx, req);
      const url = accountUrl(account.id, '/testing');
      const forced = listForcedOutcomes(db);
      return {
        title: 'Test controls',
        account,
        tab: 'testing',
        body: html`<h1>Test controls</h1>
          <section class="card" aria-labelledby="outcomes">
            <h2 id="outcomes">Forced outcomes</h2>
            <p>
              Messages sent to these numbers from now on (by any account) end in the state given, after the delay given.
            </p>
            ${
              forced.length === 0
                ? html`<p>None: the documented magic numbers decide, every other number is delivered.</p>`
                : html`<table>
                    <caption>
                      Forced outcomes
                    </caption>
                    <thead>
                      <tr>
                        <th scope="col">Number</th>
                        <th scope="col">Outcome</th>
                        <th scope="col">sent → final</th>
                        <th scope="col"><span class="muted">Action</span></th>
                      </tr>
                    </thead>
                    <tbody>
                      ${forced.map(
                        (f) =>
                          html`<tr>
                            <td>+${f.mobile_number}</td>
                            <td>${f.outcome === 'none' ? 'never final' : f.outcome}</td>
                            <td>${f.final_delay_ms === null ? 'carrier timing' : `${f.final_delay_ms} ms`}</td>
                            <td>
                              ${postButton(session, `${url}/outcomes/clear`, 'Clear', { fields: { number: f.mobile_number }, name: `Clear the outcome of +${f.mobile_number}` })}
                            </td>
                          </tr>`,
                      )}
                    </tbody>
                  </table>`
            }
            <form class="stack" method="post" action="${url}/outcomes">
              ${csrfField(session)}
              <div>
                <label for="outcome-number">Number (international digits)</label><br /><input
                  id="outcome-number"
                  name="number"
                  type="tel"
                  required
                />
              </div>
              <div>
                <label for="outcome">Outcome</label><br /><select id="outcome" name="outcome">
                  ${ForcedOutcomeRequest.shape.outcome.options.map((o) => html`<option value="${o}">${o === 'none' ? 'never final (stays sent)' : o}</option>`)}
                </select>
              </div>
              <div>
                <label for="delay">Delay sent → final, ms (empty: the carrier's)</label><br /><input
                  id="delay"
                  name="final_delay_ms"
                  type="number"
                  min="0"
                />
              </div>
              <div><button type="submit">Force outcome</button></div>
            </form>
          </section>
          <section class="card" aria-labelledby="pause">
            <h2 id="pause">Webhook deliveries</h2>
            <p>
              Now <strong>${account.webhooks_paused ? 'paused' : 'running'}</strong>. Paused, deliveries wait (as during
              a receiver outage) and go out when resumed.
            </p>
            ${postButton(session, `${url}/webhooks-paused`, account.webhooks_paused ? 'Resume deliveries' : 'Pause deliveries', { fields: { paused: account.webhooks_paused ? 'false' : 'true' } })}
          </section>
          <section class="card" aria-labelledby="reset">
            <h2 id="reset">Reset the account</h2>
            <p>
              Forgets its messages, calls, campaigns, OTPs, lookups, webhook deliveries and idempotency keys. Keeps its
              keys, settings, endpoints and wallet.
            </p>
            <form method="post" action="${url}/reset">
              ${csrfField(session)}
              <label
                ><input type="checkbox" name="confirm" value="yes" required /> I want to delete this account's
                traffic</label
              >
              <button type="submit" class="danger">Reset account</button>
            </form>
          </section>`,
      };
    }),
  );

  router.post(
    '/accounts/:accountId/testing/outcomes',
    action(ctx, back, ({ req }, form) => {
      accountFrom(ctx, req);
      const number = validate(RecipientNumber, text(form, 'number').replace(/^\+/, ''), 'body');
      const delay = wholeNumber(form, 'final_delay_ms');
      if (delay === 'invalid') throw new ApiError('validation_failed', 'The delay must be a whole number of ms');
      const input = validate(ForcedOutcomeRequest, { outcome: text(form, 'outcome'), final_delay_ms: delay }, 'body');
      setForcedOutcome(db, { mobile_number: number, ...input });
      return { to: back(req), flash: { kind: 'ok', text: `Messages to +${number} will end ${input.outcome}.` } };
    }),
  );

  router.post(
    '/accounts/:accountId/testing/outcomes/clear',
    action(ctx, back, ({ req }, form) => {
      accountFrom(ctx, req);
      clearForcedOutcome(db, text(form, 'number'));
      return { to: back(req), flash: { kind: 'ok', text: 'Outcome cleared.' } };
    }),
  );

  router.post(
    '/accounts/:accountId/testing/webhooks-paused',
    action(ctx, back, ({ req }, form) => {
      const account = accountFrom(ctx, req);
      const paused = text(form, 'paused') === 'true';
      setWebhooksPaused(db, account.id, paused);
      return { to: back(req), flash: { kind: 'ok', text: paused ? 'Deliveries paused.' : 'Deliveries resumed.' } };
    }),
  );

  router.post(
    '/accounts/:accountId/testing/reset',
    action(ctx, back, ({ req }, form) => {
      const account = accountFrom(ctx, req);
      if (text(form, 'confirm') !== 'yes') throw new ApiError('validation_failed', 'Tick the box to confirm');
      resetAccount(db, account.id);
      ctx.refusals.forget(account.id);
      return { to: back(req), flash: { kind: 'ok', text: 'Account reset.' } };
    }),
  );
}
