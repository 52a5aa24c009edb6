/**
 * The msgflow worker: one Worker for workflows and Temporal-facing activities (and the OTP provider calls,
 * run as local activities), and one for the other provider calls on the sibling queue, whose rate the
 * Temporal server enforces across every worker on it. Every provider call first takes a request from the
 * token's budget in the message store.
 */
import { Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { NativeConnection, Worker, WorkerOptions, WorkflowBundle } from '@temporalio/worker';
import { createProviderQueueActivities, createWorkflowQueueActivities } from '../activities/index.js';
import { createNexusCampaignActivities } from '../activities/nexus-campaign.js';
import { createOtpActivities } from '../activities/otp.js';
import type { OtpGuardConfig } from './api/otp-guard.js';
import type { AudienceAccess } from './audience/access.js';
import { type AudienceLoaders, importAudienceLoaders } from './audience/loaders.js';
import { MessagingClient } from './client/client.js';
import {
  ConfigError,
  parseEnv,
  TeamWeightsSettings,
  type TeamWeightsEnv,
  WorkerEnv,
  WorkerSettings,
} from './config.js';
import type { KeyRing } from './crypto/keyring.js';
import type { OtpKeys } from './crypto/otp-keys.js';
import {
  nexusCampaignTaskQueue,
  providerQueueRate,
  providerTaskQueue,
  TASK_QUEUES,
} from './definitions/task-queues.js';
import { createLogger, type Logger, silentLogger } from './log.js';
import { providerMetricsInterceptor } from './metrics/activity-interceptors.js';
import { installWorkerRuntime } from './metrics/worker-runtime.js';
import { otpGuardOf } from './otp-guard-file.js';
import { otpKeysFromEnv, otpSealKeyRingOf } from './crypto/otp-keys.js';
import {
  NEXUS_CAMPAIGN_WORKFLOWS_PATH,
  VERSIONED_WORKFLOWS_PATH,
  WORKFLOWS_PATH,
  workflowBuildId,
} from './temporal/build-id.js';
import { connectWorkerConnection } from './temporal/worker-connection.js';
import { type CurrentOutcome, makeBuildCurrent, type WorkerVersioning } from './temporal/worker-deployment.js';
import {
  dataConverterOf,
  FAILURE_CONVERTER_PATH,
  msgflowDataConverter,
  nexusAnswerDataConverter,
} from './temporal/data-converter.js';
import { requestBudgetInterceptor, storeRequestGate } from './temporal/request-classes.js';
import { teamWeightsOf } from './temporal/team-weights.js';
import { checkNexusTeams, defaultNexusTeams, type NexusTeams, nexusTeamsOf } from './api/nexus-teams.js';
import { loadWorkerSdk } from './temporal/worker-sdk.js';
import { Msgflow } from './starter/index.js';
import { explainFailure } from './starter/failures.js';
import { msgflowNexusHandler } from './starter/nexus.js';
import { nexusLinksInterceptor } from './starter/nexus-links.js';
import { startTracing, tracingClientInterceptors, tracingWorkflowClientInterceptors } from './tracing/setup.js';
import { WORKFLOW_INTERCEPTOR_MODULES, workerTracing } from './tracing/worker.js';
import { type MessageStore, openMessageStore, startRetention, storeOptionsOf } from './store/index.js';

export { VERSIONED_WORKFLOWS_PATH, WORKFLOWS_PATH };

/**
 * Workflows kept in the worker's cache. The SDK's memory-based default can let thousands of open workflows
 * (OTP sessions, single sends) overrun the heap; an evicted workflow is simply replayed when it next has
 * work, so a modest cap costs only some replay time.
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 1000;

export interface MsgflowWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  /** The workflows' queue; provider calls use `${taskQueue}-provider`. */
  taskQueue?: string;
  /** Provider client, built with in-process retries off so Temporal owns every retry. */
  messaging: MessagingClient;
  /** The message store: sending activities record their messages in it, awaited by their workflow. */
  store: MessageStore;
  /**
   * The provider token's request limit: enforced by the server on the provider queue, and by the budget in the
   * message store on every provider call.
   */
  providerRatePerMinute: number;
  /** The token's request budget in the store (default `provider`): every worker using the token shares it. */
  requestBudget?: string;
  /** A team's weight in the budget's bulk requests, asked at each request (`teamWeightsOf`); default 1 for all. */
  teamWeight?: (team: string) => number;
  /**
   * A prebuilt bundle (tests build it once for many workers); build it with `bundleMsgflowWorkflows`, with
   * `versioned` as the worker is (a mismatch is refused).
   */
  workflowBundle?: WorkflowBundle;
  /** Named audience loaders (e.g. database queries) for campaigns whose audience is `{ type: 'loader', name }`. */
  audienceLoaders?: AudienceLoaders;
  /** The folders and hosts file and URL audiences may be read from (default: `.data/audiences`, no URLs). */
  audienceAccess?: AudienceAccess;
  /** Workflow runs kept in memory (default DEFAULT_MAX_CACHED_WORKFLOWS): lower it where memory is tight. */
  maxCachedWorkflows?: number;
  /** msgflow's data converter (`msgflowDataConverter` / `dataConverterFromEnv`): with a key, payloads are encrypted. */
  dataConverter?: DataConverter;
  /** Opens sealed OTP codes in the verify activity (MSGFLOW_OTP_SEAL_KEY, else MSGFLOW_ENCRYPTION_KEY). */
  otpKeyRing?: KeyRing;
  /** The OTP fraud guard's rules (MSGFLOW_OTP_GUARD_RULES; default DEFAULT_OTP_GUARD; null: off). */
  otpGuard?: OtpGuardConfig | null;
  /** Where the worker says how the provider queue is paced when that needs the operator's attention. */
  logger?: Logger;
  /**
   * The worker deployment version the workflow worker polls as, and whether it makes itself current on start
   * (`workerVersioningOf`); without it the worker polls unversioned.
   */
  versioning?: WorkerVersioning;
  /**
   * Serve the `msgflow` Nexus service (docs/nexus.md), with the OTP keys its OTP operations need (the
   * starter's), for `teams`: team → the task queue its endpoint targets, each served by a handler fixed to that
   * team (default: the default team on the workflows' queue; `nexusTeamsOf`). Without it the worker polls no
   * Nexus tasks.
   */
  nexus?: { otpKeys: OtpKeys; teams?: NexusTeams };
}

export interface MsgflowWorker {
  run(): Promise<void>;
  shutdown(): void;
  /** The deployment version it polls as; undefined when unversioned. */
  versioning?: WorkerVersioning;
  /**
   * Once run() is called: resolves when the worker's version is routed as its `makeCurrent` asked (what was
   * done; undefined when unversioned), rejects when that failed (the worker then stops).
   */
  routed: Promise<CurrentOutcome | undefined>;
}

export async function createMsgflowWorker(options: MsgflowWorkerOptions): Promise<MsgflowWorker> {
  const {
    connection,
    namespace = 'default',
    taskQueue = TASK_QUEUES.workflows,
    messaging,
    store,
    versioning,
  } = options;
  // Before any worker exists: two teams on one queue would send one's campaigns as the other's.
  if (options.nexus?.teams) checkNexusTeams(options.nexus.teams);
  const { Worker } = await loadWorkerSdk();
  const dataConverter = options.dataConverter ?? msgflowDataConverter();
  // Bundled here rather than by Worker.create, whose bundler logs webpack's whole summary as one line; the
  // bundle carries the failure converter.
  const tracing = workerTracing();
  const workflowBundle =
    options.workflowBundle ??
    (await bundleMsgflowWorkflows({ traced: tracing !== undefined, versioned: !!versioning }));
  checkBundleVersioning(workflowBundle, !!versioning);
  const audienceSources = { audienceLoaders: options.audienceLoaders, audienceAccess: options.audienceAccess };
  const gate = storeRequestGate(
    store,
    options.requestBudget ?? 'provider',
    options.providerRatePerMinute,
    options.teamWeight,
  );
  // A person waits on each OTP call: the workflow makes it as a local activity, without a round trip through
  // the server's provider queue.
  const otpCalls = createOtpActivities(messaging, store, { keyRing: options.otpKeyRing, guard: options.otpGuard });
  const workflows = await Worker.create({
    connection,
    namespace,
    taskQueue,
    dataConverter,
    workflowBundle,
    activities: { ...createWorkflowQueueActivities(store, audienceSources), ...otpCalls },
    interceptors: {
      activity: [
        ...(tracing?.activityInterceptors ?? []),
        requestBudgetInterceptor(gate, (type) => type in otpCalls),
        providerMetricsInterceptor,
      ],
    },
    ...(tracing ? { sinks: tracing.sinks } : {}),
    maxCachedWorkflows: options.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
    ...deploymentOptionsOf(versioning),
  });
  // The provider queue joins the deployment too: a run's provider calls run on its own build's activity code.
  // Its rate still holds for the token across two builds: the server paces a task queue's partition across its
  // builds (measured on the dev server: two builds declaring 2/s together got 2/s), and the request budget in
  // the store holds every worker to the limit whatever the server does.
  const providerQueue = providerTaskQueue(taskQueue);
  const partitions = await providerQueuePartitions(connection, namespace, providerQueue, options.logger);
  const provider = await Worker.create({
    connection,
    namespace,
    taskQueue: providerQueue,
    dataConverter,
    activities: createProviderQueueActivities(messaging, store, {
      otpKeyRing: options.otpKeyRing,
      otpGuard: options.otpGuard,
      ...audienceSources,
    }),
    interceptors: {
      activity: [...(tracing?.activityInterceptors ?? []), requestBudgetInterceptor(gate), providerMetricsInterceptor],
    },
    maxTaskQueueActivitiesPerSecond: providerQueueRate(options.providerRatePerMinute, partitions),
    ...deploymentOptionsOf(versioning),
  });
  const nexusWorkers = options.nexus
    ? [
        ...(await createNexusWorkers(Worker, options, options.nexus, { dataConverter, taskQueue, namespace })),
        await createNexusCampaignWorker(Worker, options, { dataConverter, taskQueue, namespace }),
      ]
    : [];
  return runningTogether(
    [workflows, provider, ...nexusWorkers],
    versioning && {
      versioning,
      service: connection.workflowService,
      namespace,
      logger: options.logger,
    },
  );
}

/**
 * The Nexus service's workers, one on each team's queue (the default team's is the workflows' queue), each
 * with a handler fixed to its team. Their own converter has no codec, so the answers and failures they give
 * reach callers in plain form (a worker's one converter serves its Nexus answers too: on the workflow worker
 * they would be sealed); the facade they call writes msgflow's histories through a client with msgflow's
 * converter, encrypted as everywhere else, and starts every workflow on the workflows' queue.
 */
async function createNexusWorkers(
  Worker: Awaited<ReturnType<typeof loadWorkerSdk>>['Worker'],
  options: MsgflowWorkerOptions,
  { otpKeys, teams: named }: { otpKeys: OtpKeys; teams?: NexusTeams },
  { dataConverter, taskQueue, namespace }: { dataConverter: DataConverter; taskQueue: string; namespace: string },
): Promise<Worker[]> {
  const teams = named ?? defaultNexusTeams(taskQueue);
  // Its interceptors link each workflow a handler starts with the caller's (src/starter/nexus-links.ts) and,
  // when tracing, carry the operation's span into it: caller, operation and msgflow's workflow in one trace.
  const tracing = workerTracing();
  const client = new Client({
    connection: options.connection,
    namespace,
    dataConverter,
    interceptors: { workflow: [nexusLinksInterceptor, ...tracingWorkflowClientInterceptors()] },
  });
  const msgflow = new Msgflow(client, taskQueue, { otpKeys });
  const workers: Worker[] = [];
  for (const [team, teamQueue] of Object.entries(teams))
    workers.push(
      await Worker.create({
        connection: options.connection,
        namespace,
        taskQueue: teamQueue,
        dataConverter: nexusAnswerDataConverter(),
        nexusServices: [msgflowNexusHandler(msgflow, { team })],
        ...(tracing ? { interceptors: { nexus: tracing.nexusInterceptors } } : {}),
        ...deploymentOptionsOf(options.versioning),
      }),
    );
  return workers;
}

/**
 * The worker of the runs backing `startCampaign` Nexus operations (workflows/nexus-campaign.ts), on their own
 * queue, with their own bundle and no codec: a run's result and failure reach the caller as they are. Its
 * activities reach the campaign through a client with msgflow's converter, so nothing of the campaign's input
 * is ever decoded into this worker's histories. Unversioned: a run lives as long as its campaign and moves to
 * each new build like an auto-upgrade workflow (its changes must replay its histories).
 */
async function createNexusCampaignWorker(
  Worker: Awaited<ReturnType<typeof loadWorkerSdk>>['Worker'],
  options: MsgflowWorkerOptions,
  { dataConverter, taskQueue, namespace }: { dataConverter: DataConverter; taskQueue: string; namespace: string },
): Promise<Worker> {
  const tracing = workerTracing();
  const client = new Client({
    connection: options.connection,
    namespace,
    dataConverter,
    interceptors: tracingClientInterceptors(),
  });
  const campaigns = new Msgflow(client, taskQueue);
  return Worker.create({
    connection: options.connection,
    namespace,
    taskQueue: nexusCampaignTaskQueue(taskQueue),
    dataConverter: nexusAnswerDataConverter(),
    workflowBundle: await bundleNexusCampaignWorkflow({ traced: tracing !== undefined }),
    activities: createNexusCampaignActivities({
      result: (key) => campaigns.campaign(key).result(),
      cancel: async (key) => {
        await campaigns
          .campaign(key)
          .cancel()
          .catch((error: unknown) => {
            // A campaign that has finished (or is gone) has nothing left to cancel.
            if (!(error instanceof WorkflowUpdateFailedError || error instanceof WorkflowNotFoundError)) throw error;
          });
      },
      failureOf: (error) =>
        // A campaign gone (e.g. past the namespace's retention) is not waited for again.
        error instanceof WorkflowNotFoundError
          ? { type: 'CampaignNotFound', message: error.message }
          : explainFailure(error),
    }),
    ...(tracing ? { sinks: tracing.sinks, interceptors: { activity: tracing.activityInterceptors } } : {}),
  });
}

/**
 * A versioned worker's deployment options. The default behaviour applies to no msgflow workflow: each declares
 * its own (workflows/versioned.ts).
 */
function deploymentOptionsOf(versioning: WorkerVersioning | undefined): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  if (!versioning) return {};
  const { deploymentName, buildId } = versioning;
  return {
    workerDeploymentOptions: {
      useWorkerVersioning: true,
      version: { deploymentName, buildId },
      defaultVersioningBehavior: 'PINNED',
    },
  };
}

/**
 * The two workers as one: run() runs both and, for a versioned worker, makes its build current as asked once
 * the server knows it (from the workers' first polls); when that fails, both stop and run() rejects.
 */
function runningTogether(
  workers: Worker[],
  deployment:
    | { versioning: WorkerVersioning; service: NativeConnection['workflowService']; namespace: string; logger?: Logger }
    | undefined,
): MsgflowWorker {
  const shutdown = () => {
    for (const worker of workers) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
  };
  let routedAs: { resolve(outcome: CurrentOutcome | undefined): void; reject(error: unknown): void } | undefined;
  const routed = new Promise<CurrentOutcome | undefined>((resolve, reject) => (routedAs = { resolve, reject }));
  routed.catch(() => undefined);
  return {
    versioning: deployment?.versioning,
    routed,
    run: async () => {
      const running = Promise.all(workers.map((worker) => worker.run()));
      const stopped = new AbortController();
      void running.finally(() => stopped.abort()).catch(() => undefined);
      const routing = deployment
        ? makeBuildCurrent(deployment.service, deployment.namespace, deployment.versioning, {
            logger: deployment.logger,
            signal: stopped.signal,
          })
        : Promise.resolve(undefined);
      const madeCurrent = routing.then(routedAs!.resolve, (error: unknown) => {
        if (stopped.signal.aborted) return routedAs!.resolve(undefined);
        routedAs!.reject(error);
        shutdown();
        const { deploymentName, buildId } = deployment!.versioning;
        throw new Error(
          `could not make build ${buildId} current in worker deployment ${deploymentName}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      });
      await Promise.all([running, madeCurrent]);
    },
    shutdown,
  };
}

/**
 * The worker's deployment version as MSGFLOW_WORKER_VERSIONING, MSGFLOW_DEPLOYMENT_NAME, MSGFLOW_BUILD_ID and
 * MSGFLOW_DEPLOYMENT_MAKE_CURRENT set it (`makeCurrent` overrides the last); undefined when versioning is off.
 */
export function workerVersioningOf(settings: WorkerEnv, makeCurrent?: WorkerVersioning['makeCurrent']) {
  if (!settings.MSGFLOW_WORKER_VERSIONING) return undefined;
  return {
    deploymentName: settings.MSGFLOW_DEPLOYMENT_NAME,
    buildId: settings.MSGFLOW_BUILD_ID ?? workflowBuildId(),
    makeCurrent: makeCurrent ?? settings.MSGFLOW_DEPLOYMENT_MAKE_CURRENT,
  } satisfies WorkerVersioning;
}

/** workerVersioningOf for the environment (`msgflow dev`'s worker, which makes its build current on start). */
export function workerVersioningFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  makeCurrent?: WorkerVersioning['makeCurrent'],
): WorkerVersioning | undefined {
  return workerVersioningOf(parseEnv(WorkerEnv, env), makeCurrent);
}

/**
 * How many partitions the server keeps for the provider queue. It splits the queue's rate evenly across them
 * and a partition with no task waiting loses its share, so a queue of a few requests a second should have one
 * (see docs/architecture.md); the rate is computed for what the server says, so no provider window overflows.
 */
async function providerQueuePartitions(
  connection: NativeConnection,
  namespace: string,
  queue: string,
  logger: Logger = silentLogger,
): Promise<number> {
  const advice = `set matching.numTaskqueueReadPartitions and matching.numTaskqueueWritePartitions to 1 for task queue ${queue} in the server's dynamic config`;
  try {
    const { activityTaskQueuePartitions } = await connection.workflowService.listTaskQueuePartitions({
      namespace,
      taskQueue: { name: queue },
    });
    const partitions = Math.max(activityTaskQueuePartitions?.length ?? 1, 1);
    if (partitions > 1)
      logger.warn(
        `the provider queue has ${partitions} partitions: the server splits its rate across them, so campaigns reach about 75-80% of the provider's limit; ${advice}`,
        { queue, partitions },
      );
    return partitions;
  } catch (error) {
    const assumed = SERVER_DEFAULT_PARTITIONS;
    logger.warn(`could not read the provider queue's partitions; pacing it for the server default of ${assumed}`, {
      queue,
      error,
    });
    return assumed;
  }
}

/** Temporal's default partitions per task queue (matching.numTaskqueueReadPartitions). */
const SERVER_DEFAULT_PARTITIONS = 4;

/**
 * The workflows' bundle; `traced` (default: when this process traces) adds Temporal's OpenTelemetry workflow
 * interceptors, whose spans reach the exporter through the worker's sink. `versioned`: for a worker in a worker
 * deployment, each workflow with its versioning behaviour (workflows/versioned.ts); an unversioned worker must
 * not have them.
 */
export async function bundleMsgflowWorkflows({
  traced = workerTracing() !== undefined,
  versioned = false,
}: { traced?: boolean; versioned?: boolean } = {}): Promise<WorkflowBundle> {
  const { bundleWorkflowCode } = await loadWorkerSdk('bundling the workflows');
  return bundleWorkflowCode({
    workflowsPath: versioned ? VERSIONED_WORKFLOWS_PATH : WORKFLOWS_PATH,
    failureConverterPath: FAILURE_CONVERTER_PATH,
    workflowInterceptorModules: traced ? WORKFLOW_INTERCEPTOR_MODULES : [],
    logger: quietBundlerLogger,
  });
}

/** The bundle of the run behind a `startCampaign` Nexus operation (workflows/nexus-campaign.ts), on its own. */
export async function bundleNexusCampaignWorkflow({
  traced = false,
}: { traced?: boolean } = {}): Promise<WorkflowBundle> {
  const { bundleWorkflowCode } = await loadWorkerSdk('bundling the Nexus campaign workflow');
  return bundleWorkflowCode({
    workflowsPath: NEXUS_CAMPAIGN_WORKFLOWS_PATH,
    workflowInterceptorModules: traced ? WORKFLOW_INTERCEPTOR_MODULES : [],
    logger: quietBundlerLogger,
  });
}

/**
 * Refuses a bundle built for the other mode: an unversioned worker's tasks with versioning behaviours are
 * refused by the server, and a versioned worker without them would pin every run (campaigns too). A bundle
 * given as a file path is not checked.
 */
function checkBundleVersioning(bundle: WorkflowBundle, versioned: boolean): void {
  if (!('code' in bundle)) return;
  const hasBehaviours = bundle.code.includes(VERSIONED_BUNDLE_MODULE);
  if (hasBehaviours !== versioned)
    throw new Error(
      versioned
        ? 'this workflow bundle is for an unversioned worker: build it with bundleMsgflowWorkflows({ versioned: true }) for a worker with `versioning`'
        : 'this workflow bundle is for a versioned worker: build it with bundleMsgflowWorkflows() for a worker without `versioning`',
    );
}

/** How webpack names workflows/versioned in a bundle (as source or compiled). */
const VERSIONED_BUNDLE_MODULE = '/workflows/versioned.';

const quietBundlerLogger = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error(message: string, meta?: Record<string, unknown>) {
    console.error(message, meta ?? '');
  },
};

/** The folders and hosts audiences may be read from, as MSGFLOW_AUDIENCE_* set them. */
export function audienceAccessFromEnv(env: NodeJS.ProcessEnv = process.env): AudienceAccess {
  return audienceAccessOf(parseEnv(WorkerEnv, env));
}

/**
 * The worker's team weights, audience loaders and cache size, as the environment sets them: what `msgflow dev`'s
 * worker takes from it too.
 */
export async function workerChoicesFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<WorkerChoices> {
  return workerChoicesOf(
    { ...parseEnv(WorkerEnv, env), ...parseEnv(TeamWeightsSettings, env) },
    createLogger('worker'),
  );
}

type WorkerChoices = Pick<MsgflowWorkerOptions, 'teamWeight' | 'audienceLoaders' | 'maxCachedWorkflows'>;

async function workerChoicesOf(settings: WorkerEnv & TeamWeightsEnv, logger: Logger): Promise<WorkerChoices> {
  return {
    teamWeight: teamWeightsOf(settings, logger),
    audienceLoaders: settings.MSGFLOW_AUDIENCE_LOADERS
      ? await importAudienceLoaders(settings.MSGFLOW_AUDIENCE_LOADERS)
      : undefined,
    maxCachedWorkflows: settings.MSGFLOW_MAX_CACHED_WORKFLOWS,
  };
}

function audienceAccessOf(settings: WorkerEnv): AudienceAccess {
  return {
    folders: settings.MSGFLOW_AUDIENCE_DIRS,
    urlHosts: settings.MSGFLOW_AUDIENCE_URL_HOSTS,
    allowHttp: settings.MSGFLOW_AUDIENCE_URL_ALLOW_HTTP,
    allowInternalAddresses: settings.MSGFLOW_AUDIENCE_URL_ALLOW_INTERNAL,
  };
}

/**
 * The Nexus service's settings: MSGFLOW_NEXUS serves it, with the OTP keys from `env`, for the teams
 * MSGFLOW_NEXUS_TEAMS names.
 */
function nexusOf(
  settings: Pick<WorkerEnv, 'MSGFLOW_NEXUS' | 'MSGFLOW_NEXUS_TEAMS' | 'MSGFLOW_TASK_QUEUE'>,
  env: NodeJS.ProcessEnv,
): MsgflowWorkerOptions['nexus'] {
  const teams = nexusTeamsFromSettings(settings);
  return teams && { otpKeys: otpKeysFromEnv(env), teams };
}

/**
 * The teams the Nexus service serves, each on its queue (`nexusTeamsOf`); undefined when it is off. Naming teams
 * without serving them is a mistake said at start.
 */
export function nexusTeamsFromSettings(
  settings: Pick<WorkerEnv, 'MSGFLOW_NEXUS' | 'MSGFLOW_NEXUS_TEAMS' | 'MSGFLOW_TASK_QUEUE'>,
): NexusTeams | undefined {
  if (settings.MSGFLOW_NEXUS) return nexusTeamsOf(settings.MSGFLOW_TASK_QUEUE, settings.MSGFLOW_NEXUS_TEAMS);
  if (settings.MSGFLOW_NEXUS_TEAMS)
    throw new ConfigError('MSGFLOW_NEXUS_TEAMS names teams for the Nexus service: set MSGFLOW_NEXUS=true to serve it');
  return undefined;
}

/** A worker wired from the environment (`msgflow worker` and `msgflow dev`). */
export async function createMsgflowWorkerFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<MsgflowWorker> {
  const settings = parseEnv(WorkerSettings, env);
  startTracing('msgflow-worker', settings);
  if (!settings.MSGFLOW_API_TOKEN)
    throw new ConfigError('MSGFLOW_API_TOKEN is required: the provider API token the worker sends with');
  const otpGuard = otpGuardOf(settings);
  // The Nexus service's OTP operations hash and seal as the starter does: a missing key stops the worker here.
  const nexus = nexusOf(settings, env);
  const choices = await workerChoicesOf(settings, createLogger('worker'));
  const dataConverter = dataConverterOf(settings);
  // Before any native connection: the runtime is created once per process.
  await installWorkerRuntime({
    metricsAddress: settings.MSGFLOW_WORKER_METRICS_ADDRESS,
    logger: createLogger('worker'),
  });
  const messaging = new MessagingClient({
    baseUrl: settings.MSGFLOW_API_BASE_URL,
    token: settings.MSGFLOW_API_TOKEN,
    maxRetries: 0,
  });
  const store = await openMessageStore(storeOptionsOf(settings));
  // Temporal's own loader lays the TEMPORAL_* variables over a temporal.toml profile (checked above).
  const { connection, namespace } = await connectWorkerConnection(env, settings);
  const worker = await createMsgflowWorker({
    connection,
    namespace,
    taskQueue: settings.MSGFLOW_TASK_QUEUE,
    messaging,
    store,
    providerRatePerMinute: settings.MSGFLOW_RATE_LIMIT_PER_MINUTE,
    ...choices,
    audienceAccess: audienceAccessOf(settings),
    dataConverter,
    otpKeyRing: otpSealKeyRingOf(settings),
    otpGuard,
    logger: createLogger('worker'),
    versioning: workerVersioningOf(settings),
    nexus,
  }).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const log = createLogger('store');
  const stopRetention = startRetention(store, {
    retentionMs: settings.MSGFLOW_STORE_RETENTION,
    onPurged: ({ messages, rejectedEvents, otpEvents }) => {
      if (messages || rejectedEvents || otpEvents)
        log.info('retention purged old rows', { messages, rejectedEvents, otpEvents });
    },
    onError: (error) => log.warn('retention purge failed; tried again next hour', { error }),
  });
  return {
    ...worker,
    run: () =>
      worker.run().finally(async () => {
        stopRetention();
        await store.close();
      }),
  };
}
