/**
 * The webhook ingress: raw body → signature → JSON → schema → one signal per event. It answers 2xx only
 * after Temporal accepted every signal of the body, 4xx when the delivery is not authentic or not
 * well-formed (nothing is signalled), and 503 with Retry-After when Temporal is unreachable, so the
 * provider's retry brings the event back later.
 */
import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import { type ErrorBody, detailsOf } from '../api/errors.js';
import { eventsOf, WebhookBody } from '../api/events.js';
import { type Logger, silentLogger } from '../log.js';
import { type StatusSignaler, TemporalUnavailableError } from './signaler.js';
import type { WebhookVerifier } from './verifier.js';

export const WEBHOOK_PATH = '/webhooks/messaging';
const RETRY_AFTER_SECONDS = 5;

export interface IngressHooks {
  /** Called once per request with its outcome, for metrics. */
  onDelivery?(outcome: DeliveryOutcome): void;
}

export interface DeliveryOutcome {
  status: number;
  code?: string;
  events: number;
  durationMs: number;
}

export interface IngressAppOptions {
  verifier: WebhookVerifier;
  signaler: StatusSignaler;
  /** Largest body accepted; a batch of 1,000 events fits well within the default. */
  maxBodyBytes?: number;
  /** Answers /readyz: true when Temporal is reachable. */
  isReady?: () => Promise<boolean>;
  logger?: Logger;
  hooks?: IngressHooks;
  /** Served at GET /metrics when set (src/metrics/ingress.ts). */
  metrics?: MetricsEndpoint;
}

export interface MetricsEndpoint {
  contentType: string;
  render(): Promise<string>;
}

export function createIngressApp({
  verifier,
  signaler,
  maxBodyBytes = 1024 * 1024,
  isReady = async () => true,
  logger = silentLogger,
  hooks = {},
  metrics,
}: IngressAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const ready = await isReady().catch(() => false);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'temporal_unreachable' });
  });
  if (metrics) {
    app.get('/metrics', async (_req, res) => {
      res.type(metrics.contentType).send(await metrics.render());
    });
  }

  app.post(
    WEBHOOK_PATH,
    express.raw({ type: () => true, limit: maxBodyBytes }),
    async (req: Request, res: Response) => {
      const started = performance.now();
      const finish = (status: number, body: ErrorBody | { received: number }, events = 0) => {
        hooks.onDelivery?.({
          status,
          code: 'code' in body ? body.code : undefined,
          events,
          durationMs: performance.now() - started,
        });
        res.status(status).json(body);
      };
      const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);

      const verdict = verifier.verify(req.headers, raw);
      if (!verdict.ok) {
        logger.warn('webhook rejected', { reason: verdict.reason });
        return finish(401, { code: verdict.reason, message: 'The webhook signature could not be verified' });
      }

      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        return finish(400, { code: 'invalid_json', message: 'The body is not valid JSON' });
      }
      const parsed = WebhookBody.safeParse(json);
      if (!parsed.success) {
        return finish(422, {
          code: 'validation_failed',
          message: 'The body is neither a message status event nor a batch of them',
          details: detailsOf(parsed.error),
        });
      }

      const events = eventsOf(parsed.data);
      try {
        await signaler.deliver(events, verdict.id);
      } catch (error) {
        if (!(error instanceof TemporalUnavailableError)) throw error;
        logger.error('temporal unavailable; asking the provider to redeliver', { error, deliveryId: verdict.id });
        res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
        return finish(503, { code: 'temporal_unavailable', message: 'Try again later' }, events.length);
      }
      logger.debug('webhook accepted', { deliveryId: verdict.id, events: events.length });
      finish(200, { received: events.length }, events.length);
    },
  );

  app.use((_req, res) => {
    res.status(404).json({
      code: 'not_found',
      message: `Only POST ${WEBHOOK_PATH}, /healthz${metrics ? ', /readyz and /metrics' : ' and /readyz'} are served`,
    });
  });

  const onError: ErrorRequestHandler = (error, _req, res, _next) => {
    const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 413) {
      res.status(413).json({ code: 'payload_too_large', message: `Bodies are limited to ${maxBodyBytes} bytes` });
      return;
    }
    if (status >= 500) logger.error('ingress error', { error });
    res.status(status).json({
      code: status >= 500 ? 'internal_error' : 'bad_request',
      message: status >= 500 ? 'Internal error' : String(error?.message ?? 'Bad request'),
    });
  };
  app.use(onError);
  return app;
}
