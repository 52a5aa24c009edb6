/** Signing in (admin token in a password field, or a one-time code from a sign-in link) and out. */
import type { Request, Router } from 'express';
import type { SandboxContext } from '../../context.js';
import { html } from '../html.js';
import { renderPage, sessionOf, text } from '../kit.js';
import { BASE, csrfField } from '../layout.js';
import { sameSecret, type Sessions, type SignInCodes } from '../session.js';
import { SignInThrottle } from '../sign-in-throttle.js';

/** Where to go after signing in: only a console path, so the parameter cannot send anyone elsewhere. */
function nextOf(req: Request, value: unknown): string {
  return typeof value === 'string' && value.startsWith(`${BASE}/`) && !value.startsWith('//') && !value.includes('\\')
    ? value
    : BASE;
}

export function registerSignIn(router: Router, ctx: SandboxContext, sessions: Sessions, codes: SignInCodes): void {
  const throttle = new SignInThrottle(ctx.now);
  const signInPage = (req: Request, error?: string, status = error ? 401 : 200) => {
    const res = req.res!;
    const session = sessionOf(res);
    renderPage(res, session, {
      title: 'Sign in',
      status,
      body: html`<h1>Sign in to the sandbox console</h1>
        ${error && html`<div class="flash error" role="alert">${error}</div>`}
        <section class="card">
          <form class="stack" method="post" action="${BASE}/sign-in">
            ${csrfField(session)}
            <input
              type="hidden"
              name="next"
              value="${nextOf(req, (req.body as Record<string, unknown> | undefined)?.next ?? req.query.next)}"
            />
            <div>
              <label for="admin-token">Admin token</label><br />
              <input
                id="admin-token"
                name="admin_token"
                type="password"
                autocomplete="current-password"
                required
                size="50"
                aria-describedby="admin-token-help"
              />
            </div>
            <p id="admin-token-help" class="muted">
              The token the sandbox was started with (<code>--admin-token</code>,
              <code>MSGFLOW_SANDBOX_ADMIN_TOKEN</code>) or printed at start. <code>msgflow dev</code> prints a one-time
              sign-in link instead.
            </p>
            <div><button type="submit">Sign in</button></div>
          </form>
        </section>`,
    });
  };

  router.get('/sign-in', (req, res) => {
    if (sessionOf(res).signedIn) return res.redirect(303, nextOf(req, req.query.next));
    signInPage(req);
  });

  router.post('/sign-in', (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const wait = throttle.waitSeconds(address);
    if (wait > 0) {
      res.setHeader('Retry-After', String(wait));
      signInPage(req, `Too many wrong admin tokens from your address: try again in ${wait} s.`, 429);
      return;
    }
    if (!sameSecret(text(form, 'admin_token'), ctx.options.adminToken)) {
      throttle.failed(address);
      signInPage(req, 'That is not the admin token.');
      return;
    }
    throttle.succeeded(address);
    sessions.signIn(res, sessionOf(res));
    res.redirect(303, nextOf(req, form.next));
  });

  // The link `msgflow dev` prints: the code is spent here, then the address bar no longer shows it.
  router.get('/sign-in/link', (req, res) => {
    const code = typeof req.query.code === 'string' ? req.query.code : '';
    if (!code || !codes.redeem(code)) {
      signInPage(req, 'This sign-in link has expired or was already used. Sign in with the admin token instead.');
      return;
    }
    sessions.signIn(res, sessionOf(res));
    res.redirect(303, BASE);
  });

  router.post('/sign-out', (_req, res) => {
    sessions.signOut(res, sessionOf(res));
    res.redirect(303, `${BASE}/sign-in`);
  });
}
