/**
 * The provider sandbox: a complete, stateful implementation of the Messaging API v1 with a simulated
 * carrier, a webhook dispatcher and an admin API. `startSandbox()` opens the database, starts the HTTP
 * server and the timer loops; `close()` stops them all.
 */
import { randomBytes } from 'node:crypto';
import { listen, type Listening } from '../http/listen.js';
import { createApp } from './app.js';
import { CONSOLE_BASE } from './console/base.js';
import { createConsole } from './console/router.js';
import { SignInCodes, signInLink } from './console/session.js';
import { Carrier } from './carrier.js';
import type { SandboxContext } from './context.js';
import { CursorCodec } from './cursor.js';
import { openDatabase, persistentSetting } from './db.js';
import { WebhookDispatcher } from './dispatcher.js';
import { RateLimiter } from './http/rate-limit.js';
import { IdempotencyStore } from './idempotency.js';
import { resolveOptions, type SandboxOptions } from './options.js';
import { ServerErrors } from './server-errors.js';
import { Refusals } from './refusals.js';

export type { SandboxOptions, CarrierTiming, WebhookTiming, WebhookChaos } from './options.js';
export { DEFAULT_PRICES } from './options.js';
export { SandboxAdmin, SandboxAdminError } from './admin/client.js';
export { MAGIC_NUMBERS, VOICE_MAGIC_NUMBERS } from './carrier.js';
export { EMAIL_MAGIC } from './checks.js';
export { OTP_DEFAULT_SENDER } from './handlers/otp.js';

export interface RunningSandbox {
  /** http://HOST:PORT */
  url: string;
  /** url + '/v1': the API's {base_url}. */
  baseUrl: string;
  adminToken: string;
  /** Whether the admin token was generated (it is then printed at start by the CLI). */
  adminTokenGenerated: boolean;
  /** url + '/dashboard': the web console. */
  consoleUrl: string;
  /** A link that signs into the console once, within ten minutes; it carries a one-time code, never the admin token. */
  consoleSignInLink(): string;
  /** Stops the timer loops and the server, then closes the database. */
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const adminTokenGenerated = !options.adminToken;
  const opts = resolveOptions(options, options.adminToken ?? `adm_${randomBytes(24).toString('base64url')}`);
  const db = await openDatabase(opts.db);
  const now = opts.now;
  const idempotency = new IdempotencyStore(db);
  idempotency.recover(now());
  const ctx: SandboxContext = {
    db,
    options: opts,
    now,
    carrier: new Carrier(db, opts.carrier, now),
    cursors: new CursorCodec(db),
    idempotency,
    limiter: new RateLimiter(),
    signInCodes: new SignInCodes(now),
    refusals: new Refusals(),
    serverErrors: new ServerErrors(),
    otpKey: Buffer.from(
      persistentSetting(db, 'otp_secret', () => randomBytes(32).toString('base64')),
      'base64',
    ),
  };
  const dispatcher = new WebhookDispatcher(db, opts.webhooks, now, opts.log);
  const webConsole = createConsole(ctx);

  let listening: Listening;
  try {
    listening = await listen(createApp(ctx, webConsole), opts.host, opts.port);
  } catch (error) {
    db.close();
    throw error;
  }

  let housekeepingAt = 0;
  const loop = setInterval(() => {
    try {
      ctx.carrier.tick();
      dispatcher.tick();
      if (now() - housekeepingAt > 60_000) {
        housekeepingAt = now();
        ctx.limiter.prune(housekeepingAt);
        idempotency.purgeExpired(housekeepingAt);
      }
    } catch (error) {
      opts.log(`sandbox: background loop error: ${error instanceof Error ? error.message : String(error)}`);
    }
  }, opts.tickMs);

  const { server, url } = listening;
  let closing: Promise<void> | undefined;
  return {
    url,
    baseUrl: `${url}/v1`,
    adminToken: opts.adminToken,
    adminTokenGenerated,
    consoleUrl: `${url}${CONSOLE_BASE}`,
    consoleSignInLink: () => signInLink(url, ctx.signInCodes),
    close: () =>
      (closing ??= (async () => {
        clearInterval(loop);
        webConsole.close();
        await dispatcher.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        db.close();
      })()),
  };
}
