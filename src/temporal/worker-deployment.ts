/**
 * The worker's place in a Temporal Worker Deployment: the version (deployment name + build id) its workflow
 * worker polls as, and, when asked, making that version current so the server routes new workflows to it.
 * The server routes nothing to a version until one is made current (`temporal worker deployment
 * set-current-version`): `msgflow dev` and the test stacks do it on start; a worker in production does it
 * only for the deployment's first build (MSGFLOW_DEPLOYMENT_MAKE_CURRENT=if-none) and leaves later builds to
 * the operator's ramp and promotion (docs/operations.md).
 */
import type { WorkflowService } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { MakeCurrentMode } from '../definitions/versioning.js';

export type { MakeCurrentMode };
import { type Logger, silentLogger } from '../log.js';
import { GRPC_STATUS, grpcCodeOf } from './grpc.js';
import { sleep } from '../sleep.js';

export interface WorkerVersioning extends WorkerDeploymentVersion {
  makeCurrent: MakeCurrentMode;
}

/** How long a worker waits for the server to register its version (its pollers) before giving up. */
const REGISTRATION_TIMEOUT_MS = 60_000;
const RETRY_INTERVAL_MS = 250;

export interface MakeCurrentOptions {
  logger?: Logger;
  timeoutMs?: number;
  /** Stops the waiting (the worker shut down before its version was registered). */
  signal?: AbortSignal;
}

export type CurrentOutcome = 'made-current' | 'already-current' | 'left-to-operator';

/**
 * Makes `version` the deployment's current version as `mode` says. Called once the worker polls: until its
 * pollers reach the server, the version is unknown to it (NOT_FOUND) or has none (FAILED_PRECONDITION), and
 * the call is repeated.
 */
export async function makeBuildCurrent(
  service: WorkflowService,
  namespace: string,
  versioning: WorkerVersioning,
  { logger = silentLogger, timeoutMs = REGISTRATION_TIMEOUT_MS, signal }: MakeCurrentOptions = {},
): Promise<CurrentOutcome> {
  const { deploymentName, buildId, makeCurrent } = versioning;
  if (makeCurrent === 'never') return 'left-to-operator';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { current, chosen } = await currentRouting(service, namespace, deploymentName);
      if (current === buildId) return 'already-current';
      if (chosen && makeCurrent === 'if-none') {
        logger.info(
          `build ${buildId} waits for promotion: ${current ? `build ${current}` : 'unversioned workers'} current in deployment ${deploymentName} (temporal worker deployment set-ramping-version / set-current-version)`,
          { deployment: deploymentName, buildId, current: current ?? 'unversioned' },
        );
        return 'left-to-operator';
      }
      await service.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName,
        buildId,
        identity: `msgflow worker ${buildId}`,
      });
      return 'made-current';
    } catch (error) {
      if (!notRegisteredYet(error) || Date.now() >= deadline) throw error;
      await sleep(RETRY_INTERVAL_MS, signal);
    }
  }
}

/**
 * The deployment's current build id (undefined: unversioned workers, or none yet), and whether anyone ever
 * chose it — false for a deployment not yet known or never given a current version (a first install), true
 * once a build or the unversioned workers were made current, which `if-none` leaves as it is.
 */
export async function currentRouting(
  service: WorkflowService,
  namespace: string,
  deploymentName: string,
): Promise<{ current: string | undefined; chosen: boolean }> {
  try {
    const { workerDeploymentInfo } = await service.describeWorkerDeployment({ namespace, deploymentName });
    const routing = workerDeploymentInfo?.routingConfig;
    return {
      current: routing?.currentDeploymentVersion?.buildId || undefined,
      chosen: !!routing?.currentDeploymentVersion?.buildId || !!routing?.currentVersionChangedTime,
    };
  } catch (error) {
    if (grpcCodeOf(error) === GRPC_STATUS.notFound) return { current: undefined, chosen: false };
    throw error;
  }
}

/** The server has not seen this version's pollers yet: asking again shortly succeeds. */
function notRegisteredYet(error: unknown): boolean {
  const code = grpcCodeOf(error);
  return code === GRPC_STATUS.notFound || code === GRPC_STATUS.failedPrecondition;
}
