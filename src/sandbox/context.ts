/** Everything a request handler or timer loop of one running sandbox shares. */
import type { Carrier } from './carrier.js';
import type { SignInCodes } from './console/session.js';
import type { CursorCodec } from './cursor.js';
import type { Db } from './db.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { Refusals } from './refusals.js';
import type { ServerErrors } from './server-errors.js';
import type { IdempotencyStore } from './idempotency.js';
import type { ResolvedOptions } from './options.js';

export interface SandboxContext {
  db: Db;
  options: ResolvedOptions;
  now: () => number;
  carrier: Carrier;
  cursors: CursorCodec;
  idempotency: IdempotencyStore;
  limiter: RateLimiter;
  /** Why recent API calls of each account were refused (the console's overview shows them). */
  refusals: Refusals;
  /** Injected 500s per account (admin API `server-errors`). */
  serverErrors: ServerErrors;
  /** One-time codes for console sign-in links (issued through the admin API and to `msgflow dev`). */
  signInCodes: SignInCodes;
  /** Key for hashing OTP codes (kept in the database so codes still verify after a restart). */
  otpKey: Buffer;
}
