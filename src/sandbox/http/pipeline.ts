/**
 * One request pipeline for every v1 operation, driven by the route table in src/api/routes.ts:
 * authenticate (401) → rate limit (429, X-RateLimit-* headers from here on) → IP allowlist (403) →
 * scope (403) → per-IP OTP limit → body (415/400/413) and query (422) validation → idempotency
 * (replay / 409 / 422) → the handler, run in one database transaction with the stored idempotent response.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  type Route,
  type RouteName,
  routes,
} from '../../api/routes.js';
import { type AccountRow, type TokenRow, touchToken } from '../accounts.js';
import type { SandboxContext } from '../context.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, requestHash, type StoredResponse } from '../idempotency.js';
import { assertIpAllowed, assertScope, authenticate } from './auth.js';
import { bodyParserError, jsonBodyParser, validate } from './body.js';
import { ApiError } from './errors.js';
import { rateLimited, setRateLimitHeaders } from './rate-limit.js';

type RouteOf<K extends RouteName> = (typeof routes)[K];
type BodyOf<K extends RouteName> = RouteOf<K> extends { body: infer S extends z.ZodType } ? z.output<S> : undefined;
type QueryOf<K extends RouteName> = RouteOf<K> extends { query: infer S extends z.ZodType } ? z.output<S> : undefined;

/** What a handler receives: the authenticated account, and its input already validated. */
export interface Call<K extends RouteName> {
  ctx: SandboxContext;
  account: AccountRow;
  token: TokenRow;
  body: BodyOf<K>;
  query: QueryOf<K>;
  params: Record<string, string>;
  /** Client address as judged for the allowlist (socket, or X-Forwarded-For behind a trusted proxy). */
  ip: string;
  idempotencyKey: string | null;
  /** The clock reading for this request; use it for every timestamp the request writes. */
  now: number;
}

/**
 * A handler returns the payload that goes under `data` (the whole page for a paginated route, nothing for
 * 204). It runs synchronously inside a transaction, so throwing an ApiError undoes everything it wrote.
 */
export type Handler<K extends RouteName> = (call: Call<K>) => unknown;
export type Handlers = { [K in RouteName]: Handler<K> };

const IdempotencyKeyHeader = z.object({
  [IDEMPOTENCY_KEY_HEADER]: z
    .string()
    .min(1)
    .max(MAX_IDEMPOTENCY_KEY_LENGTH)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
});

/** `/voice/{id}` → `/voice/:id` */
export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** One route as the router serves it: its name, its contract, its handler and the body parser. */
interface ServedRoute {
  name: RouteName;
  route: Route;
  handler: Handler<RouteName>;
  parseJson: ReturnType<typeof jsonBodyParser>;
}

/** Who is calling: the authenticated token and its account. */
interface Caller {
  token: TokenRow;
  account: AccountRow;
}

export function v1Router(ctx: SandboxContext, handlers: Handlers): Router {
  const router = express.Router();
  const parseJson = jsonBodyParser(ctx.options.bodyLimitBytes);
  const methodsByPath = new Map<string, string[]>();

  for (const [name, route] of Object.entries(routes) as [RouteName, Route][]) {
    const path = expressPath(route.path);
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), route.method]);
    const served: ServedRoute = { name, route, handler: handlers[name] as Handler<RouteName>, parseJson };
    const method = route.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete';
    router[method](path, async (req: Request, res: Response) => {
      await handle(ctx, served, req, res);
    });
  }
  // A known path with an unknown method is a 405 naming the allowed ones, not a 404.
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    router.all(path, () => {
      throw new ApiError('method_not_allowed', `This path accepts ${allow}`, undefined, { Allow: allow });
    });
  }
  return router;
}

async function handle(ctx: SandboxContext, served: ServedRoute, req: Request, res: Response): Promise<void> {
  const { db } = ctx;
  const { route } = served;
  const { token, account } = authenticate(db, req);
  touchToken(db, token.id, ctx.now());
  try {
    await serve(ctx, served, { req, res }, { token, account });
  } catch (error) {
    const refused = error instanceof ApiError ? error : bodyParserError(error);
    if (refused) {
      ctx.refusals.record(account.id, {
        at: ctx.now(),
        method: route.method,
        path: route.path,
        status: refused.status,
        code: refused.code,
        message: refused.message,
      });
    }
    throw error;
  }
}

/** Everything after authentication; a refusal from here on is recorded for the account (see refusals.ts). */
async function serve(
  ctx: SandboxContext,
  { name, route, handler, parseJson }: ServedRoute,
  { req, res }: { req: Request; res: Response },
  { token, account }: Caller,
): Promise<void> {
  const { db } = ctx;
  // An injected outage of the provider's front end: refused before the rate limit counts the call.
  if (ctx.serverErrors.activeUntil(account.id, ctx.now()) !== null)
    throw new ApiError('internal_error', 'Injected server error (sandbox test control)');

  const limit = ctx.limiter.hit(
    `token:${token.id}`,
    account.rate_per_minute ?? ctx.options.defaultRatePerMinute,
    ctx.now(),
  );
  setRateLimitHeaders(res, limit);
  if (!limit.allowed) throw rateLimited(limit, ctx.now(), 'Rate limit of this token');

  assertIpAllowed(db, account, req);
  assertScope(token, route.scope);
  const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  if (name === 'otpSend') {
    const perIp = ctx.limiter.hit(`otp-ip:${ip}`, ctx.options.otpPerIpPerMinute, ctx.now());
    if (!perIp.allowed) throw rateLimited(perIp, ctx.now(), 'OTP sends from this IP address');
  }

  let body: unknown;
  if (route.body) {
    await parseJson(req, res);
    body = validate(route.body, req.body, 'body');
  }
  const query = route.query ? validate(route.query, { ...req.query }, 'query') : undefined;

  const keyHeader = route.idempotent ? req.get(IDEMPOTENCY_KEY_HEADER) : undefined;
  const idempotencyKey =
    keyHeader === undefined
      ? null
      : validate(IdempotencyKeyHeader, { [IDEMPOTENCY_KEY_HEADER]: keyHeader }, 'header')[IDEMPOTENCY_KEY_HEADER];
  if (idempotencyKey) {
    const claim = ctx.idempotency.claim(account.id, idempotencyKey, requestHash(name, req.body), ctx.now());
    if (claim.kind === 'replay') {
      res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
      send(res, claim.response);
      return;
    }
  }

  try {
    // Charged sends take a moment to process, during which their Idempotency-Key is held (409 for a duplicate).
    if (route.charged && route.idempotent && ctx.options.sendLatencyMs > 0) await sleep(ctx.options.sendLatencyMs);
    const response = db.transaction((): StoredResponse => {
      const now = ctx.now();
      // Re-read the account inside the transaction: the balance may have moved while this request waited.
      const fresh = db.prepare('SELECT * FROM accounts WHERE id = ?').get(account.id) as AccountRow;
      const payload = handler({
        ctx,
        account: fresh,
        token,
        body,
        query,
        params: { ...req.params } as Record<string, string>,
        ip,
        idempotencyKey,
        now,
      } as Call<RouteName>);
      const stored: StoredResponse = {
        status: route.status,
        body:
          route.status === 204
            ? null
            : route.paginated
              ? checkPage(route, payload)
              : { data: checkPayload(route, payload) },
      };
      if (idempotencyKey) ctx.idempotency.complete(account.id, idempotencyKey, stored);
      return stored;
    })();
    send(res, response);
  } catch (error) {
    if (idempotencyKey) ctx.idempotency.release(account.id, idempotencyKey);
    throw error;
  }
}

function send(res: Response, response: StoredResponse): void {
  if (response.status === 204) res.status(204).end();
  else res.status(response.status).json(response.body);
}

/** The sandbox is the contract's oracle: a payload that does not match its schema is a sandbox bug. */
function checkPayload(route: Route, payload: unknown): unknown {
  if (!route.response) return payload;
  const result = route.response.safeParse(payload);
  if (!result.success)
    throw new Error(`sandbox bug: ${route.method} ${route.path} produced an invalid payload: ${result.error.message}`);
  return payload;
}

function checkPage(route: Route, page: unknown): unknown {
  const { data } = page as { data: unknown[] };
  for (const item of data) checkPayload(route, item);
  return page;
}
