export { createIngressApp, WEBHOOK_PATH, type DeliveryOutcome, type IngressAppOptions } from './app.js';
export { startIngress, type RunningIngress } from './server.js';
export {
  outcomeRouter,
  StoreUnavailableError,
  TemporalUnavailableError,
  type OutcomeRouter,
  type OutcomeRouterOptions,
} from './outcome-router.js';
export { standardWebhooksVerifier, type WebhookVerifier } from './verifier.js';
