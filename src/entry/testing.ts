/**
 * `msgflow/testing`: msgflow in your own tests — a Temporal dev server, the provider sandbox, or the whole
 * stack (sandbox, account and token, ingress, worker) on ephemeral ports. Needs the optional peers
 * `@temporalio/worker` and `better-sqlite3`.
 */
export { DEV_SENDERS, type RunningStack, type StackOptions, startStack } from '../stack.js';
export {
  type DevServer,
  DevServerError,
  type DevServerOptions,
  ensureTemporal,
  startDevServer,
} from '../temporal/dev-server.js';
export { resolveTemporalCli, TemporalCliError } from '../temporal/cli.js';
export { bundleMsgflowWorkflows } from '../worker.js';
export {
  MAGIC_NUMBERS,
  type RunningSandbox,
  SandboxAdmin,
  type SandboxOptions,
  startSandbox,
  VOICE_MAGIC_NUMBERS,
} from '../sandbox/index.js';
export { type Logger, silentLogger } from '../log.js';
