/**
 * `msgflow/sandbox`: the stateful provider sandbox (the Messaging API v1 over HTTP, a simulated carrier,
 * webhooks, an admin API). Needs the optional peer `better-sqlite3`.
 */
export * from '../sandbox/index.js';
