/** What console pages and form actions share: rendering, flash-and-redirect, and the account in the path. */
import type { Request, RequestHandler, Response } from 'express';
import { type AccountRow, getAccount } from '../accounts.js';
import type { SandboxContext } from '../context.js';
import { ApiError } from '../http/errors.js';
import type { Html } from './html.js';
import { type AccountTab, layout } from './layout.js';
import { liveVersion } from './live.js';
import type { Flash, Session } from './session.js';

/** A console-only refusal (CSRF, no session): an HTML error page with this status. */
export class ConsoleError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Visit {
  ctx: SandboxContext;
  req: Request;
  res: Response;
  session: Session;
}

export interface PageResult {
  title: string;
  body: Html;
  account?: AccountRow;
  tab?: AccountTab;
  live?: boolean;
  status?: number;
}

/** A form action's answer: go somewhere with a message (POST-redirect-GET), or show a page at once. */
export type ActionResult = { to: string; flash?: Flash } | { page: PageResult };

export function sessionOf(res: Response): Session {
  return res.locals.session as Session;
}

export function renderPage(res: Response, session: Session, page: PageResult, liveSince?: string): void {
  const flash = session.flash;
  session.flash = undefined;
  res
    .status(page.status ?? 200)
    .type('html')
    .send(
      layout({
        title: page.title,
        session,
        body: page.body,
        flash,
        live: page.live && liveSince !== undefined ? liveSince : undefined,
        ...(page.account && page.tab
          ? { account: { id: page.account.id, name: page.account.name, current: page.tab } }
          : {}),
      }),
    );
}

export function accountFrom(ctx: SandboxContext, req: Request): AccountRow {
  const account = getAccount(ctx.db, String(req.params.accountId));
  if (!account) throw new ApiError('not_found', 'There is no account with this id');
  return account;
}

export function page(ctx: SandboxContext, view: (visit: Visit) => PageResult): RequestHandler {
  return (req, res) => {
    const session = sessionOf(res);
    // Read before the page's data, so a change made meanwhile is newer than the version the page carries.
    const since = liveVersion(ctx);
    renderPage(res, session, view({ ctx, req, res, session }), since);
  };
}

/**
 * A POST handler. Its work runs in one transaction; an ApiError (bad input, unknown id) comes back to `back`
 * as an error message with the problems it lists, never as a bare error page.
 */
export function action(
  ctx: SandboxContext,
  back: (req: Request) => string,
  run: (visit: Visit, form: Record<string, unknown>) => ActionResult,
): RequestHandler {
  return (req, res) => {
    const session = sessionOf(res);
    const form = (req.body ?? {}) as Record<string, unknown>;
    let result: ActionResult;
    try {
      result = ctx.db.transaction(() => run({ ctx, req, res, session }, form))();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const details = (error.details ?? []).map((d) => ` ${d.path ? `${d.path}: ` : ''}${d.message}.`).join('');
      session.flash = { kind: 'error', text: `${error.message}.${details}` };
      res.redirect(303, back(req));
      return;
    }
    if ('page' in result) {
      // A page shown in answer to a POST (a secret shown once): never cached, never stored in history.
      res.set('Cache-Control', 'no-store');
      renderPage(res, session, result.page);
      return;
    }
    session.flash = result.flash;
    res.redirect(303, result.to);
  };
}

/** Form values: a text field (trimmed), a checkbox, every checked value of a checkbox group. */
export function text(form: Record<string, unknown>, name: string): string {
  const value = form[name];
  return typeof value === 'string' ? value.trim() : '';
}

export function checked(form: Record<string, unknown>, name: string): boolean {
  return form[name] !== undefined;
}

export function checkedValues(form: Record<string, unknown>, name: string): string[] {
  const value = form[name];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? [value] : [];
}

/** An optional whole number from a form field: undefined when empty, NaN-free. */
export function wholeNumber(form: Record<string, unknown>, name: string): number | null | 'invalid' {
  const value = text(form, name);
  if (value === '') return null;
  return /^\d{1,15}$/.test(value) ? Number(value) : 'invalid';
}
