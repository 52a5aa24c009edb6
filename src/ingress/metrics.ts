/**
 * The ingress's Prometheus metrics (prom-client), served on the ingress's own port at GET /metrics:
 * deliveries by HTTP status, status events received, signature rejections by reason, events rejected by
 * validation, how long the store took to record a delivery, and its relay's outcomes per signal and the
 * store's untold backlog (read from the store at each scrape). One registry per ingress, so several can
 * share a process (tests).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { METRICS } from '../definitions/metric-names.js';
import type { DeliveryOutcome, IngressAppOptions } from './app.js';
import type { OutcomeRouter } from './outcome-router.js';
import type { MessageStore } from '../store/index.js';

/** Seconds: a store write is milliseconds when healthy, seconds when the store struggles. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface IngressMetrics {
  registry: Registry;
  onDelivery(outcome: DeliveryOutcome): void;
  onRejectedEvents(count: number): void;
  /** Called with the number of outcomes each signal carried (the relay's `onSignal`). */
  onSignal(outcomes: number): void;
  /** The same router, timed. */
  instrument(router: OutcomeRouter): OutcomeRouter;
}

export interface IngressMetricsOptions {
  processMetrics?: boolean;
  /** The store whose outbox backlog is reported; none: no backlog gauges. */
  store?: Pick<MessageStore, 'outbox'>;
}

export function createIngressMetrics({ processMetrics = true, store }: IngressMetricsOptions = {}): IngressMetrics {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });
  if (store) outboxGauges(registry, store);

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
      'recorded (the relay tells their workflows), or deferred (503, provider redelivers)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const rejections = new Counter({
    name: METRICS.ingressSignatureRejections,
    help: 'Deliveries refused because their signature could not be verified, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const invalidEvents = new Counter({
    name: METRICS.ingressEventsRejected,
    help: 'Events of authentic deliveries that failed validation (kept in the message store for an operator)',
    registers: [registry],
  });
  const outcomesPerSignal = new Histogram({
    name: METRICS.ingressOutcomesPerSignal,
    help: 'Outcomes carried by one signal to a waiting workflow',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2000, 4000, 8000],
    registers: [registry],
  });
  const signalSeconds = new Histogram({
    name: METRICS.ingressSignalSeconds,
    help: 'Time for the store to record one delivery (its events and rejected events)',
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
      if (status === 200) events.inc({ result: 'recorded' }, count);
      if (status === 503) events.inc({ result: 'deferred' }, count);
    },
    onRejectedEvents(count) {
      invalidEvents.inc(count);
    },
    onSignal(outcomes) {
      outcomesPerSignal.observe(outcomes);
    },
    instrument(router) {
      return {
        async deliver(batch, deliveryId, rejected) {
          const stop = signalSeconds.startTimer();
          try {
            await router.deliver(batch, deliveryId, rejected);
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

/** Adds metrics to an ingress's options: the timed router, the delivery hooks and the /metrics endpoint. */
export function withIngressMetrics<T extends IngressAppOptions>(options: T, metrics: IngressMetrics): T {
  const { onDelivery, onRejectedEvents } = options.hooks ?? {};
  return {
    ...options,
    router: metrics.instrument(options.router),
    hooks: {
      ...options.hooks,
      onDelivery(outcome: DeliveryOutcome) {
        metrics.onDelivery(outcome);
        onDelivery?.(outcome);
      },
      onRejectedEvents(count: number) {
        metrics.onRejectedEvents(count);
        onRejectedEvents?.(count);
      },
    },
    metrics: { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() },
  };
}

/**
 * The outbox's backlog, read from the store at each scrape: every ingress on one store reports the same
 * figures (alert on the max, not the sum).
 */
function outboxGauges(registry: Registry, store: Pick<MessageStore, 'outbox'>): void {
  let read: Promise<{ untold: number; oldestAgeSeconds: number; refusedWorkflows: number }> | undefined;
  // One store read per scrape serves every gauge.
  const backlog = () =>
    (read ??= store.outbox
      .backlog()
      .then(({ untold, oldestUntoldAt, refusedWorkflows }) => ({
        untold,
        oldestAgeSeconds: oldestUntoldAt === null ? 0 : Math.max(0, (Date.now() - oldestUntoldAt) / 1000),
        refusedWorkflows,
      }))
      .finally(() => setImmediate(() => (read = undefined))));
  new Gauge({
    name: METRICS.relayUntoldOutcomes,
    help: 'Outcomes the message store recorded and has not yet told their workflows',
    registers: [registry],
    async collect() {
      this.set((await backlog()).untold);
    },
  });
  new Gauge({
    name: METRICS.relayOldestUntoldSeconds,
    help: 'Age of the oldest outcome not yet told its workflow (0 when none)',
    registers: [registry],
    async collect() {
      this.set((await backlog()).oldestAgeSeconds);
    },
  });
  new Gauge({
    name: METRICS.relayRefusedWorkflows,
    help: 'Workflows with outcomes to tell whose last signal Temporal refused (each retried on its own backoff)',
    registers: [registry],
    async collect() {
      this.set((await backlog()).refusedWorkflows);
    },
  });
}
