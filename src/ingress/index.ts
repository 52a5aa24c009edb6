export { createIngressApp, WEBHOOK_PATH, type DeliveryOutcome, type IngressAppOptions } from './app.js';
export { startIngress, type RunningIngress } from './server.js';
export { temporalSignaler, TemporalUnavailableError, type StatusSignaler } from './signaler.js';
export { standardWebhooksVerifier, type WebhookVerifier } from './verifier.js';
