/**
 * `msgflow/client`: the typed client of the provider's Messaging API v1 alone. It loads no Temporal
 * package and no native module, so a service that only calls the API installs little.
 */
export * from '../client/index.js';
