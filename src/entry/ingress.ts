/**
 * `msgflow/ingress`: the webhook ingress that verifies the provider's signed events and signals the
 * message workflows; as an Express app to mount, or as a server of its own.
 */
export * from '../ingress/index.js';
export { startIngressFromEnv } from '../ingress/from-env.js';
export type { TemporalSignalerOptions } from '../ingress/signaler.js';
export type { IncomingHeaders } from '../ingress/verifier.js';
