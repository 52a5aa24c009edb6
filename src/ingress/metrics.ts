/**
 * The ingress's Prometheus metrics (prom-client), served on the ingress's own port at GET /metrics:
 * deliveries by HTTP status, status events received, signature rejections by reason, and how long Temporal
 * took to accept a delivery's signals. One registry per ingress, so several can share a process (tests).
 */
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { METRICS } from '../definitions/metric-names.js';
import type { DeliveryOutcome, IngressAppOptions } from './app.js';
import type { StatusSignaler } from './signaler.js';

/** Seconds: a signal round trip is milliseconds when healthy, seconds when Temporal struggles. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface IngressMetrics {
  registry: Registry;
  onDelivery(outcome: DeliveryOutcome): void;
  /** The same signaler, timed. */
  instrument(signaler: StatusSignaler): StatusSignaler;
}

export function createIngressMetrics({ processMetrics = true }: { processMetrics?: boolean } = {}): IngressMetrics {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });

  const deliveries = new Counter({
    name: METRICS.ingressDeliveries,
    help: 'Webhook deliveries answered, by HTTP status and error code (empty when accepted)',
    labelNames: ['status', 'code'] as const,
    registers: [registry],
  });
  const events = new Counter({
    name: METRICS.ingressEventsReceived,
    help:
      'Status events in authentic, well-formed deliveries, by result: ' +
      'signalled, or deferred (503, provider redelivers)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const rejections = new Counter({
    name: METRICS.ingressSignatureRejections,
    help: 'Deliveries refused because their signature could not be verified, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const signalSeconds = new Histogram({
    name: METRICS.ingressSignalSeconds,
    help: "Time for Temporal to accept every signal of one delivery (its events' signal-with-start calls)",
    labelNames: ['result'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: METRICS.ingressRequestSeconds,
    help: 'Time to answer a webhook delivery, by HTTP status',
    labelNames: ['status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });

  return {
    registry,
    onDelivery({ status, code, events: count, durationMs }) {
      deliveries.inc({ status: String(status), code: code ?? '' });
      requestSeconds.observe({ status: String(status) }, durationMs / 1000);
      if (status === 401) rejections.inc({ reason: code ?? 'unknown' });
      if (status === 200) events.inc({ result: 'signalled' }, count);
      if (status === 503) events.inc({ result: 'deferred' }, count);
    },
    instrument(signaler) {
      return {
        async deliver(batch, deliveryId) {
          const stop = signalSeconds.startTimer();
          try {
            await signaler.deliver(batch, deliveryId);
            stop({ result: 'accepted' });
          } catch (error) {
            stop({ result: 'failed' });
            throw error;
          }
        },
      };
    },
  };
}

/** Adds metrics to an ingress's options: the timed signaler, the delivery hook and the /metrics endpoint. */
export function withIngressMetrics<T extends IngressAppOptions>(options: T, metrics: IngressMetrics): T {
  const { onDelivery } = options.hooks ?? {};
  return {
    ...options,
    signaler: metrics.instrument(options.signaler),
    hooks: {
      ...options.hooks,
      onDelivery(outcome: DeliveryOutcome) {
        metrics.onDelivery(outcome);
        onDelivery?.(outcome);
      },
    },
    metrics: { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() },
  };
}
