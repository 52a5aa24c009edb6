/**
 * `msgflow/worker`: run msgflow's worker, or build your own from its parts (the compiled workflows, the
 * activity factories, the data converter). Needs the optional peer `@temporalio/worker`.
 */
export {
  bundleMsgflowWorkflows,
  createMsgflowWorker,
  createMsgflowWorkerFromEnv,
  DEFAULT_MAX_CACHED_WORKFLOWS,
  type MsgflowWorker,
  type MsgflowWorkerOptions,
  WORKFLOWS_PATH,
} from '../temporal/worker.js';
export { connectClient } from '../temporal/connection.js';
export { connectWorkerConnection } from '../temporal/worker-connection.js';
export {
  dataConverterFromEnv,
  FAILURE_CONVERTER_PATH,
  keyRingOf,
  msgflowDataConverter,
} from '../temporal/data-converter.js';
export { installWorkerRuntime, type WorkerRuntimeOptions } from '../metrics/worker-runtime.js';
export { otpSealKeyRingFromEnv } from '../starter/otp.js';
export { TASK_QUEUES } from '../temporal/task-queues.js';
export { providerTaskQueue } from '../../workflows/ids.js';
export {
  type AudienceLoader,
  type AudienceLoaders,
  type AudiencePage,
  type AudiencePageRequest,
  createProviderQueueActivities,
  createWorkflowQueueActivities,
  FAILURE_TYPES,
  type ProviderActivitySecrets,
  type WorkflowQueueActivityOptions,
} from '../../activities/index.js';
export { importAudienceLoaders } from '../../activities/audience-loaders.js';
export { MissingPackageError } from '../optional-packages.js';
export { createLogger, type Logger } from '../log.js';
