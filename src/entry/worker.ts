/**
 * `msgflow/worker`: run msgflow's worker, or build your own from its parts (the compiled workflows, the
 * activity factories, the message store, the data converter). Needs the optional peer `@temporalio/worker`,
 * and `better-sqlite3` (SQLite store) or `pg` (PostgreSQL store).
 */
export {
  bundleMsgflowWorkflows,
  createMsgflowWorker,
  createMsgflowWorkerFromEnv,
  DEFAULT_MAX_CACHED_WORKFLOWS,
  type MsgflowWorker,
  type MsgflowWorkerOptions,
  VERSIONED_WORKFLOWS_PATH,
  WORKFLOWS_PATH,
  workerVersioningFromEnv,
} from '../worker.js';
/** Worker versioning: `createMsgflowWorker`'s `versioning`, the build id, and what a deployment still runs. */
export { type MakeCurrentMode, type WorkerVersioning } from '../temporal/worker-deployment.js';
export { workflowBuildId } from '../temporal/build-id.js';
export { deploymentStatus, type DeploymentStatus, type BuildStatus } from '../temporal/deployment-status.js';
export { WORKFLOW_VERSIONING, DEFAULT_DEPLOYMENT_NAME } from '../definitions/versioning.js';
export { openMessageStore, storeOptionsFromEnv, type MessageStore, type MessageStoreOptions } from '../store/index.js';
export { connectClient } from '../temporal/connection.js';
export { connectWorkerConnection } from '../temporal/worker-connection.js';
/** Traces over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set: call before connecting. */
export { activeTracing, startTracingFromEnv, type Tracing } from '../tracing/setup.js';
export {
  dataConverterFromEnv,
  FAILURE_CONVERTER_PATH,
  keyRingOf,
  msgflowDataConverter,
} from '../temporal/data-converter.js';
export { installWorkerRuntime, type WorkerRuntimeOptions } from '../metrics/worker-runtime.js';
export { otpSealKeyRingFromEnv } from '../crypto/otp-keys.js';
/** Teams' weights for `createMsgflowWorker`'s `teamWeight`: from MSGFLOW_TEAM_WEIGHTS or a file read live. */
export { teamWeightsOf } from '../temporal/team-weights.js';
export { parseTeamWeights, TeamWeightsError, type TeamWeights } from '../api/team-weights.js';
/** The teams `createMsgflowWorker`'s `nexus` option serves, each on its queue (docs/nexus.md). */
export { nexusTeamsOf, parseNexusTeams, NexusTeamsError, type NexusTeams } from '../api/nexus-teams.js';
export { providerTaskQueue, TASK_QUEUES } from '../definitions/task-queues.js';
export {
  createProviderQueueActivities,
  createWorkflowQueueActivities,
  type ProviderActivitySecrets,
  type WorkflowQueueActivityOptions,
} from '../../activities/index.js';
export {
  type AudienceLoader,
  type AudienceLoaders,
  type AudiencePage,
  type AudiencePageRequest,
  importAudienceLoaders,
} from '../audience/loaders.js';
export { FAILURE_TYPES } from '../definitions/failure-types.js';
export { MissingPackageError } from '../optional-packages.js';
export { createLogger, type Logger } from '../log.js';
