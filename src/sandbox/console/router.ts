/**
 * The web console under /dashboard: server-rendered pages over the same database as the API. Signed in with
 * the admin token (typed into a form, never in a URL) or a one-time sign-in code; every form carries the
 * session's CSRF token; answers are never cached and may not be framed or run scripts from elsewhere.
 */
import express, { type ErrorRequestHandler, type Request, type Router } from 'express';
import type { SandboxContext } from '../context.js';
import { ApiError } from '../http/errors.js';
import { SCRIPT, STYLESHEET } from './assets.js';
import { html } from './html.js';
import { ConsoleError, renderPage, sessionOf } from './kit.js';
import { BASE } from './layout.js';
import { LiveFeed } from './live.js';
import { registerAccountPages } from './pages/accounts.js';
import { registerDeliveryPages } from './pages/deliveries.js';
import { registerInboxPages } from './pages/inbox.js';
import { registerKeyPages } from './pages/keys.js';
import { registerMessagePages } from './pages/messages.js';
import { registerSettingsPages } from './pages/settings.js';
import { registerSignIn } from './pages/sign-in.js';
import { registerTestingPages } from './pages/testing.js';
import { registerWalletPages } from './pages/wallet.js';
import { registerWebhookPages } from './pages/webhooks.js';
import { sameSecret, Sessions } from './session.js';

export interface Console {
  router: Router;
  /** Ends the live feeds (before the server closes). */
  close(): void;
}

export function createConsole(ctx: SandboxContext): Console {
  const codes = ctx.signInCodes;
  const router = express.Router();
  const sessions = new Sessions(ctx.now, BASE);
  const live = new LiveFeed(ctx);

  router.use((_req, res, next) => {
    res.set({
      'Cache-Control': 'no-store',
      'Content-Security-Policy':
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'same-origin',
    });
    next();
  });
  router.get('/static/console.css', (_req, res) => {
    res.type('css').send(STYLESHEET);
  });
  router.get('/static/console.js', (_req, res) => {
    res.type('js').send(SCRIPT);
  });

  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 }));
  router.use((req, res, next) => {
    res.locals.session = sessions.ensure(req, res);
    if (req.method === 'POST') assertCsrf(req);
    next();
  });

  registerSignIn(router, ctx, sessions, codes);

  // Everything past this point needs a signed-in session.
  router.use((req, res, next) => {
    if (sessionOf(res).signedIn) return next();
    if (req.method !== 'GET') throw new ConsoleError(401, 'Sign in first');
    const nextPath = `${BASE}${req.url}`;
    res.redirect(303, `${BASE}/sign-in?next=${encodeURIComponent(nextPath)}`);
  });
  router.get('/live', (req, res) => live.subscribe(req, res));

  for (const register of [
    registerAccountPages,
    registerMessagePages,
    registerDeliveryPages,
    registerKeyPages,
    registerWebhookPages,
    registerSettingsPages,
    registerWalletPages,
    registerTestingPages,
    registerInboxPages,
  ])
    register(router, ctx);

  router.use(() => {
    throw new ApiError('not_found', 'There is no such page');
  });
  router.use(errorPage(ctx));
  return { router, close: () => live.close() };
}

function assertCsrf(req: Request): void {
  const given = (req.body as Record<string, unknown> | undefined)?._csrf;
  const session = sessionOf(req.res!);
  if (typeof given !== 'string' || !sameSecret(given, session.csrf)) {
    throw new ConsoleError(
      403,
      'The form was refused: its security token is missing or out of date. Reload the page and try again',
    );
  }
}

function errorPage(ctx: SandboxContext): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    const known = error instanceof ApiError || error instanceof ConsoleError ? error : clientError(error);
    if (!known)
      ctx.options.log(
        `sandbox console: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    const status = known?.status ?? 500;
    const message = known?.message ?? 'The console failed to handle this request';
    if (res.headersSent) {
      res.end();
      return;
    }
    renderPage(res, sessionOf(res), {
      title: `Error ${status}`,
      status,
      body: html`<h1>Error ${status}</h1>
        <p role="alert">${message}</p>
        <p><a href="${BASE}">Back to the accounts</a></p>`,
    });
  };
}

/** 4xx errors raised by Express or the form parser (a body too large, bad encoding). */
function clientError(error: unknown): ApiError | null {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  return new ApiError('bad_request', 'The request could not be understood');
}
