/**
 * The codec endpoint (Temporal's remote codec protocol) as an Express app: `POST …/encode` and
 * `POST …/decode` with `{ payloads }` in proto3 JSON, run through msgflow's payload codec, for callers holding
 * a token (auth.ts), with CORS for the Temporal UI's origin. Nothing it handles is logged: payloads are
 * personal data and the path may carry the token.
 */
import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import type { PayloadCodec } from '@temporalio/common';
import { CodecRequest } from '../api/codec-io.js';
import { type ErrorBody, detailsOf } from '../api/errors.js';
import { type Logger, silentLogger } from '../log.js';
import { tokenChecker } from './auth.js';
import { fromJsonPayload, toJsonPayload } from './payload-json.js';

export interface CodecAppOptions {
  codec: PayloadCodec;
  /** Accepted tokens: the current first and, while rotating, the previous. */
  tokens: readonly string[];
  /** Browser origins allowed to call (the Temporal UI's, e.g. http://localhost:8233). */
  allowedOrigins: readonly string[];
  maxBodyBytes?: number;
  logger?: Logger;
}

const OPERATION = /^(?<prefix>.*)\/(?<op>encode|decode)\/?$/;

export function createCodecApp({
  codec,
  tokens,
  allowedOrigins,
  maxBodyBytes = 8 * 1024 * 1024,
  logger = silentLogger,
}: CodecAppOptions): express.Express {
  const authorized = tokenChecker(tokens);
  const origins = new Set(allowedOrigins.map((o) => o.replace(/\/+$/, '')));
  const app = express();
  app.disable('x-powered-by');

  // CORS first, so preflights (which carry no credential) are answered and foreign origins refused.
  app.use(corsGate(origins));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  // The credential is checked before the body is even read.
  const authorize = (req: Request, res: Response, next: () => void) => {
    const { prefix = '' } = OPERATION.exec(req.path)!.groups!;
    if (authorized({ header: req.headers.authorization, pathPrefix: prefix })) return next();
    res.setHeader('WWW-Authenticate', 'Bearer realm="msgflow codec"');
    fail(res, 401, {
      code: 'unauthorized',
      message: 'A valid codec token is required (Authorization: Bearer <token>)',
    });
  };

  app.post(OPERATION, authorize, express.json({ limit: maxBodyBytes, type: () => true }), codecHandler(codec, logger));

  app.use((req, res) => {
    fail(res, req.method === 'POST' || req.method === 'GET' ? 404 : 405, {
      code: req.method === 'POST' || req.method === 'GET' ? 'not_found' : 'method_not_allowed',
      message: 'Only POST …/encode, POST …/decode and GET /healthz are served',
    });
  });

  app.use(errorHandler(maxBodyBytes, logger));
  return app;
}

const fail = (res: Response, status: number, body: ErrorBody) => res.status(status).json(body);

/** Answers preflights, refuses origins not allowed, and marks allowed ones for the browser. */
function corsGate(origins: ReadonlySet<string>): express.RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!origins.has(origin)) {
        return fail(res, 403, {
          code: 'origin_not_allowed',
          message: `Origin ${origin} may not call this codec endpoint`,
        });
      }
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
      res.setHeader('Access-Control-Max-Age', '600');
      return res.status(204).end();
    }
    next();
  };
}

/** `POST …/encode` and `POST …/decode`: the payloads through the codec, a clear 422 for bad ones. */
function codecHandler(codec: PayloadCodec, logger: Logger): express.RequestHandler {
  return async (req: Request, res: Response) => {
    const { op } = OPERATION.exec(req.path)!.groups!;
    const parsed = CodecRequest.safeParse(req.body);
    if (!parsed.success) {
      return fail(res, 422, {
        code: 'validation_failed',
        message: 'The body must be { payloads: [...] } in proto3 JSON',
        details: detailsOf(parsed.error),
      });
    }
    let payloads;
    try {
      payloads = parsed.data.payloads.map(fromJsonPayload);
    } catch (error) {
      return fail(res, 422, {
        code: 'validation_failed',
        message: `A payload is not valid proto3 JSON: ${(error as Error).message}`,
      });
    }
    try {
      const result = op === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads);
      res.json({ payloads: result.map(toJsonPayload) });
    } catch (error) {
      // Wrong or rotated-out key, altered ciphertext: the caller's data, not our fault, and worth a clear answer.
      logger.warn('codec request failed', { op, error });
      fail(res, 422, { code: `${op}_failed`, message: error instanceof Error ? error.message : String(error) });
    }
  };
}

/** Body-parser and unexpected errors as the endpoint's error bodies; only a 5xx is logged. */
function errorHandler(maxBodyBytes: number, logger: Logger): ErrorRequestHandler {
  return (error, _req, res, _next) => {
    const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 413)
      return fail(res, 413, { code: 'payload_too_large', message: `Bodies are limited to ${maxBodyBytes} bytes` });
    if (error?.type === 'entity.parse.failed')
      return fail(res, 400, { code: 'invalid_json', message: 'The body is not valid JSON' });
    if (status >= 500) logger.error('codec endpoint error', { error });
    fail(res, status, {
      code: status >= 500 ? 'internal_error' : 'bad_request',
      message: status >= 500 ? 'Internal error' : String(error?.message ?? 'Bad request'),
    });
  };
}
