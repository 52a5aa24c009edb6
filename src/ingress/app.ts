/**
 * The webhook ingress: raw body → signature → JSON → each event's schema → message store, whose outbox the
 * relay tells the waiting workflows from (relay.ts). It answers 200 as soon as the store recorded the body,
 * 401 when the delivery is not authentic (nothing is recorded), and 503 with Retry-After only when the store
 * is unreachable, so the provider's retry brings the events back later; Temporal's state does not matter. An authentic
 * event that fails validation is kept in the store's rejected events and named in the answer; the body's
 * other events are recorded as usual.
 */
import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import type { ErrorBody } from '../api/errors.js';
import { parseWebhookEvents } from '../api/events.js';
import { type Logger, silentLogger } from '../log.js';
import { type OutcomeRouter, StoreUnavailableError } from './outcome-router.js';
import type { WebhookVerifier } from './verifier.js';
import { inSpan, markFailed, messageIdAttributes, type Span, SpanKind } from '../tracing/spans.js';

export const WEBHOOK_PATH = '/webhooks/messaging';
const RETRY_AFTER_SECONDS = 5;
const REQUEST_ATTRIBUTES = { 'http.request.method': 'POST', 'http.route': WEBHOOK_PATH };

export interface IngressHooks {
  /** Called once per request with its outcome, for metrics. */
  onDelivery?(outcome: DeliveryOutcome): void;
  /** Called with the number of authentic events that failed validation in a request. */
  onRejectedEvents?(count: number): void;
}

export interface DeliveryOutcome {
  status: number;
  code?: string;
  events: number;
  durationMs: number;
}

export interface IngressAppOptions {
  verifier: WebhookVerifier;
  router: OutcomeRouter;
  /** Largest body accepted; a batch of 1,000 events fits well within the default. */
  maxBodyBytes?: number;
  /** Answers /readyz: true when the store is reachable. */
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
  router,
  maxBodyBytes = 1024 * 1024,
  isReady = async () => true,
  logger = silentLogger,
  hooks = {},
  metrics,
}: IngressAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // The provider never revalidates an answer; an ETag would hash every response body for nothing.
  app.disable('etag');

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const ready = await isReady().catch(() => false);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable' });
  });
  if (metrics) {
    app.get('/metrics', async (_req, res) => {
      res.type(metrics.contentType).send(await metrics.render());
    });
  }

  app.post(WEBHOOK_PATH, express.raw({ type: () => true, limit: maxBodyBytes }), (req: Request, res: Response) =>
    inSpan(`POST ${WEBHOOK_PATH}`, { kind: SpanKind.SERVER, attributes: REQUEST_ATTRIBUTES }, (span) =>
      receive({ verifier, router, logger, hooks }, req, res, span),
    ),
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

/** One webhook delivery: verified, parsed and recorded, answered with what became of it. */
async function receive(
  { verifier, router, logger, hooks }: Required<Pick<IngressAppOptions, 'verifier' | 'router' | 'logger' | 'hooks'>>,
  req: Request,
  res: Response,
  span: Span,
): Promise<void> {
  const started = performance.now();
  const finish = (status: number, body: ErrorBody | { received: number; rejected: unknown[] }, events = 0) => {
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) markFailed(span, 'code' in body ? body.code : String(status));
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
  span.setAttribute('msgflow.delivery_id', verdict.id);

  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    json = undefined;
  }
  const { events, rejected } =
    json === undefined
      ? { events: [], rejected: [{ index: 0, reason: 'the body is not valid JSON', event: raw.toString('utf8') }] }
      : parseWebhookEvents(json);
  span.setAttributes({
    'msgflow.events': events.length,
    ...messageIdAttributes(events.map((e) => e.provider_message_id)),
  });

  try {
    await router.deliver(events, verdict.id, rejected);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    const code = 'store_unavailable';
    logger.error(`${code}; asking the provider to redeliver`, { error, deliveryId: verdict.id });
    res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    return finish(503, { code, message: 'Try again later' }, events.length);
  }
  if (rejected.length) {
    // Authentic but malformed: a retry would not fix it, so it is kept for an operator and acknowledged.
    logger.warn('webhook events rejected', { deliveryId: verdict.id, rejected: rejected.length });
    hooks.onRejectedEvents?.(rejected.length);
  }
  logger.debug('webhook accepted', { deliveryId: verdict.id, events: events.length });
  finish(
    200,
    { received: events.length, rejected: rejected.map(({ index, reason }) => ({ index, reason })) },
    events.length,
  );
}
