/** Every webhook delivery of an account with its attempts, one delivery's detail, and redelivering it. */
import type { Router } from 'express';
import { DeliveryState } from '../../../api/admin.js';
import type { SandboxContext } from '../../context.js';
import { getDelivery, listDeliveries } from '../../deliveries.js';
import { ApiError } from '../../http/errors.js';
import { redeliver } from '../../test-controls.js';
import { deliveriesTable, deliveryDetail, deliveryUrl } from '../delivery-views.js';
import { html } from '../html.js';
import { accountFrom, action, page } from '../kit.js';
import { accountUrl } from '../layout.js';

export function registerDeliveryPages(router: Router, ctx: SandboxContext): void {
  router.get(
    '/accounts/:accountId/deliveries',
    page(ctx, ({ req }) => {
      const account = accountFrom(ctx, req);
      const parsed = DeliveryState.safeParse(req.query.state);
      const state = parsed.success ? parsed.data : undefined;
      const deliveries = listDeliveries(ctx.db, account.id, { state, limit: 100 });
      const url = accountUrl(account.id, '/deliveries');
      return {
        title: 'Webhook deliveries',
        account,
        tab: 'deliveries',
        live: true,
        body: html`<h1>Webhook deliveries</h1>
          <form method="get" action="${url}">
            <label for="state-filter">State</label>
            <select id="state-filter" name="state">
              <option value="">any</option>
              ${DeliveryState.options.map((s) => html`<option value="${s}" ${s === state ? html` selected` : ''}>${s}</option>`)}
            </select>
            <button type="submit">Filter</button>
          </form>
          <div id="delivery-list" data-live-region>
            ${deliveriesTable(account.id, deliveries, 'The 100 newest deliveries, each with its attempts')}
          </div>`,
      };
    }),
  );

  router.get(
    '/accounts/:accountId/deliveries/:deliveryId',
    page(ctx, ({ req, session }) => {
      const account = accountFrom(ctx, req);
      const delivery = getDelivery(ctx.db, account.id, String(req.params.deliveryId));
      if (!delivery) throw new ApiError('not_found', 'This account has no webhook delivery with this id');
      return {
        title: `Delivery ${delivery.id}`,
        account,
        tab: 'deliveries',
        live: true,
        body: html`<h1>Delivery <code>${delivery.id}</code></h1>
          <div id="delivery" data-live-region>${deliveryDetail(session, account.id, delivery)}</div>`,
      };
    }),
  );

  router.post(
    '/accounts/:accountId/deliveries/:deliveryId/redeliver',
    action(
      ctx,
      (req) => deliveryUrl(String(req.params.accountId), String(req.params.deliveryId)),
      ({ req }) => {
        const account = accountFrom(ctx, req);
        const id = String(req.params.deliveryId);
        if (!redeliver(ctx.db, account.id, id, ctx.now()))
          throw new ApiError('not_found', 'This delivery does not exist or its endpoint was deleted');
        return { to: deliveryUrl(account.id, id), flash: { kind: 'ok', text: 'Queued for another attempt now.' } };
      },
    ),
  );
}
