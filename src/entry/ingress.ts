/**
 * `msgflow/ingress`: the webhook ingress that verifies the provider's signed events, records them in the
 * message store, and the relay that tells the workflows waiting for them from the store; as an Express app
 * to mount, or as a server of its own. The store needs the optional peer `better-sqlite3` (SQLite) or `pg` (PostgreSQL).
 */
export {
  createIngressApp,
  type DeliveryOutcome,
  type IngressAppOptions,
  type IngressHooks,
  type MetricsEndpoint,
  WEBHOOK_PATH,
} from '../ingress/app.js';
export { type RunningIngress, startIngress } from '../ingress/server.js';
export { startIngressFromEnv } from '../ingress/from-env.js';
export {
  type OutcomeRouter,
  outcomeRouter,
  type OutcomeRouterOptions,
  StoreUnavailableError,
} from '../ingress/outcome-router.js';
export { type Relay, type RelayOptions, startRelay } from '../ingress/relay.js';
export { type IncomingHeaders, standardWebhooksVerifier, type WebhookVerifier } from '../ingress/verifier.js';
export { createIngressMetrics, type IngressMetrics, withIngressMetrics } from '../ingress/metrics.js';
export { openMessageStore, storeOptionsFromEnv, type MessageStore, type MessageStoreOptions } from '../store/index.js';
export { connectClient, lazyClient } from '../temporal/connection.js';
/** Traces over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set: call before connecting. */
export { activeTracing, startTracingFromEnv, type Tracing } from '../tracing/setup.js';
export { MissingPackageError } from '../optional-packages.js';
