/** A phone-like inbox per number: every text, OTP code and voice call sent to it, oldest at the top. */
import type { Router } from 'express';
import { RecipientNumber } from '../../../api/common.js';
import { inboxOf } from '../../admin/routes.js';
import type { SandboxContext } from '../../context.js';
import { type Html, html } from '../html.js';
import { page } from '../kit.js';
import { BASE, when } from '../layout.js';

const RECENT_NUMBERS = 30;

export function registerInboxPages(router: Router, ctx: SandboxContext): void {
  router.get(
    '/inbox',
    page(ctx, ({ req }) => {
      const given = typeof req.query.number === 'string' ? req.query.number.trim().replace(/^\+/, '') : '';
      const parsed = given ? RecipientNumber.safeParse(given) : undefined;
      const number = parsed?.success ? parsed.data : undefined;
      const recent = ctx.db
        .prepare(
          `SELECT mobile_number, MAX(created_at) AS last FROM (
             SELECT mobile_number, created_at FROM messages UNION ALL SELECT mobile_number, created_at FROM voice_calls)
           GROUP BY mobile_number ORDER BY last DESC LIMIT ?`,
        )
        .all(RECENT_NUMBERS) as { mobile_number: string }[];
      return {
        title: number ? `Inbox of +${number}` : 'Phone inbox',
        live: number !== undefined,
        status: parsed && !parsed.success ? 422 : 200,
        body: html`<h1>${number ? `Inbox of +${number}` : 'Phone inbox'}</h1>
          <form method="get" action="${BASE}/inbox">
            <label for="number">Phone number</label>
            <input
              id="number"
              name="number"
              type="tel"
              value="${given}"
              placeholder="2348012345678"
              aria-describedby="number-help"
              ${parsed && !parsed.success ? html` aria-invalid="true"` : ''}
            />
            <button type="submit">Open inbox</button>
            <span id="number-help" class="muted">International digits, e.g. 2348012345678.</span>
          </form>
          ${parsed && !parsed.success && html`<div class="flash error" role="alert">That is not a valid international number.</div>`}
          ${number ? phone(ctx, number) : ''}
          <nav aria-label="Recent numbers">
            <h2>Recent numbers</h2>
            ${
              recent.length === 0
                ? html`<p>Nothing sent yet.</p>`
                : html`<ul>
                    ${recent.map((r) => html`<li><a href="${BASE}/inbox?number=${r.mobile_number}">+${r.mobile_number}</a></li>`)}
                  </ul>`
            }
          </nav>`,
      };
    }),
  );
}

function phone(ctx: SandboxContext, number: string): Html {
  const entries = inboxOf(ctx, number).reverse();
  return html`<div class="phone" id="phone" data-live-region>
    ${
      entries.length === 0
        ? html`<p>Nothing received yet.</p>`
        : html`<ol aria-label="Received, oldest first">
            ${entries.map(
              (e) =>
                html`<li class="bubble ${e.kind}" data-inbox="${e.provider_message_id}">
                  <div class="from">${e.kind === 'voice' ? `Voice call from ${e.sender}` : e.sender}</div>
                  ${e.code ? html`<div class="code" aria-label="Code">${e.code}</div>` : ''}
                  <div>${e.text}</div>
                  <div class="muted">${when(e.created_at)}</div>
                </li>`,
            )}
          </ol>`
    }
  </div>`;
}
