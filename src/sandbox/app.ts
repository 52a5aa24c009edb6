/**
 * The sandbox's HTTP surface: /healthz, /v1 (the Messaging API, mounted from the route table),
 * /v1/openapi.json, /admin, and the web console under /dashboard (HTML, with its own error pages).
 * Whatever goes wrong elsewhere, the answer is a JSON error body, never a crash.
 */
import express, { type ErrorRequestHandler, type Express } from 'express';
import { openApiDocument } from '../api/openapi.js';
import { adminRouter } from './admin/routes.js';
import { CONSOLE_BASE } from './console/base.js';
import type { Console } from './console/router.js';
import type { SandboxContext } from './context.js';
import { handlers } from './handlers/index.js';
import { bodyParserError } from './http/body.js';
import { ApiError } from './http/errors.js';
import { v1Router } from './http/pipeline.js';

export function createApp(ctx: SandboxContext, console: Console): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', ctx.options.trustProxy);
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // The document is public (no auth), like the spec it is generated from.
  const openApi = openApiDocument('/v1');
  app.get('/v1/openapi.json', (_req, res) => {
    res.json(openApi);
  });
  app.use('/v1', v1Router(ctx, handlers));
  app.use('/admin', adminRouter(ctx));
  app.use(CONSOLE_BASE, console.router);

  app.use((req) => {
    throw new ApiError('not_found', `There is no endpoint ${req.method} ${req.path}`);
  });
  app.use(errorHandler(ctx));
  return app;
}

function errorHandler(ctx: SandboxContext): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    const apiError =
      error instanceof ApiError ? error : (bodyParserError(error) ?? clientError(error) ?? internal(ctx, error));
    if (res.headersSent) {
      res.end();
      return;
    }
    res.set(apiError.headers).status(apiError.status).json(apiError.body());
  };
}

/** Other 4xx errors raised by Express itself (e.g. a path parameter that is not valid percent-encoding). */
function clientError(error: unknown): ApiError | null {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  return new ApiError('bad_request', 'The request could not be understood (check the path and its encoding)');
}

function internal(ctx: SandboxContext, error: unknown): ApiError {
  // Stack traces only: request data (numbers, texts, tokens) is never logged.
  ctx.options.log(
    `sandbox: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  return new ApiError('internal_error', 'The sandbox failed to handle this request');
}
