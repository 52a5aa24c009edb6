/** Temporal infrastructure: task queues, search attributes, connections, and the dev server. */
export { TASK_QUEUES, type TaskQueueName } from './task-queues.js';
export {
  SA,
  SEARCH_ATTRIBUTE_DEFINITIONS,
  MsgflowKind,
  MsgflowCampaignKey,
  MsgflowProviderMessageId,
  MsgflowFinalStatus,
  MsgflowSender,
  searchAttributeFlags,
} from './search-attributes.js';
export { registerSearchAttributes } from './search-attribute-registration.js';
export {
  resolveTemporalCli,
  planTemporalCli,
  msgflowCacheDir,
  TemporalCliError,
  TEMPORAL_CLI_VERSION,
  type CliPlan,
} from './cli.js';
export { startDevServer, ensureTemporal, DevServerError, type DevServer, type DevServerOptions } from './dev-server.js';
export {
  connectClient,
  connectionSettings,
  DEFAULT_TEMPORAL_ADDRESS,
  type TemporalConnectionSettings,
} from './connection.js';
export { connectWorkerConnection } from './worker-connection.js';
