/**
 * What an operator needs to know before stopping a build's workers: per build of a worker deployment, whether
 * the server routes new runs to it (current, ramping), how many msgflow runs of each type still run on it, and
 * whether it is safe to stop. Runs are counted in the visibility store by Temporal's own search attributes
 * (`TemporalWorkerDeploymentVersion`, `TemporalWorkflowVersioningBehavior`), which answer at once; the
 * server's own drainage status is refreshed only every few minutes and is shown beside them.
 */
import type { WorkflowService } from '@temporalio/client';
import proto from '@temporalio/proto';
import { deploymentVersionSearchValue, MSGFLOW_WORKFLOW_TYPES } from '../definitions/versioning.js';
import { GRPC_STATUS, grpcCodeOf } from './grpc.js';

const { WorkerDeploymentVersionStatus, VersionDrainageStatus } = proto.temporal.api.enums.v1;

/** How the server routes new runs to a build. */
export type BuildRouting = 'current' | 'ramping' | 'none';

export interface BuildRuns {
  /** Open runs on the build, msgflow's by type; `other` counts runs of types msgflow does not register. */
  running: Record<string, number>;
  /** Open runs pinned to the build (of any type): each keeps the build's workers needed until it ends. */
  pinned: number;
  /** Pinned ones among `running`, by type. */
  pinnedByType: Record<string, number>;
}

export interface BuildStatus extends BuildRuns {
  buildId: string;
  routing: BuildRouting;
  /** The share of new runs a ramping build gets, in percent. */
  rampPercentage?: number;
  /** The server's status of the version (inactive, current, ramping, draining, drained). */
  serverStatus: string;
  /** The server's drainage status (refreshed every few minutes), when it keeps one. */
  serverDrainage?: string;
  safeToStop: boolean;
  /** Why it is or is not safe to stop. */
  reason: string;
}

export interface DeploymentStatus {
  deployment: string;
  namespace: string;
  /** The build new runs start on; null: none is current (they go to unversioned workers). */
  currentBuildId: string | null;
  ramping: { buildId: string; percentage: number } | null;
  builds: BuildStatus[];
}

export class DeploymentNotFoundError extends Error {
  override name = 'DeploymentNotFoundError';
}

/**
 * Whether a build's workers may stop: never while new runs are routed to it, nor while a run is pinned to it.
 * Auto-upgrade runs left on it move to the current build at their next workflow task, so they do not hold it.
 */
export function stopVerdict(
  routing: BuildRouting,
  pinned: number,
  rampPercentage?: number,
): { safeToStop: boolean; reason: string } {
  if (routing === 'current') return { safeToStop: false, reason: 'current: new runs start on it' };
  if (routing === 'ramping')
    return { safeToStop: false, reason: `ramping: ${rampPercentage ?? 0}% of new runs start on it` };
  if (pinned > 0)
    return { safeToStop: false, reason: `${pinned} pinned run${pinned === 1 ? '' : 's'} still run on it` };
  return {
    safeToStop: true,
    reason: 'no new runs and no pinned run; auto-upgrade runs left move to the current build at their next task',
  };
}

export async function deploymentStatus(
  service: WorkflowService,
  namespace: string,
  deployment: string,
): Promise<DeploymentStatus> {
  const info = await describeDeployment(service, namespace, deployment);
  const routing = info.routingConfig;
  const currentBuildId = routing?.currentDeploymentVersion?.buildId || null;
  const rampingBuildId = routing?.rampingDeploymentVersion?.buildId || null;
  const ramping = rampingBuildId
    ? { buildId: rampingBuildId, percentage: routing?.rampingVersionPercentage ?? 0 }
    : null;
  const builds = await Promise.all(
    (info.versionSummaries ?? []).flatMap((summary) => {
      const buildId = summary.deploymentVersion?.buildId;
      if (!buildId) return [];
      return [
        (async (): Promise<BuildStatus> => {
          const runs = await runsOnBuild(service, namespace, deployment, buildId);
          const buildRouting: BuildRouting =
            buildId === currentBuildId ? 'current' : buildId === rampingBuildId ? 'ramping' : 'none';
          const rampPercentage = buildRouting === 'ramping' ? ramping?.percentage : undefined;
          const drainage = summary.drainageInfo?.status ?? summary.drainageStatus;
          return {
            buildId,
            routing: buildRouting,
            ...(rampPercentage !== undefined ? { rampPercentage } : {}),
            serverStatus: enumWord(WorkerDeploymentVersionStatus, summary.status, 'WORKER_DEPLOYMENT_VERSION_STATUS_'),
            ...(drainage
              ? { serverDrainage: enumWord(VersionDrainageStatus, drainage, 'VERSION_DRAINAGE_STATUS_') }
              : {}),
            ...runs,
            ...stopVerdict(buildRouting, runs.pinned, rampPercentage),
          };
        })(),
      ];
    }),
  );
  builds.sort((a, b) => ROUTING_ORDER[a.routing] - ROUTING_ORDER[b.routing] || a.buildId.localeCompare(b.buildId));
  return { deployment, namespace, currentBuildId, ramping, builds };
}

const ROUTING_ORDER: Record<BuildRouting, number> = { current: 0, ramping: 1, none: 2 };

async function describeDeployment(service: WorkflowService, namespace: string, deployment: string) {
  try {
    const { workerDeploymentInfo } = await service.describeWorkerDeployment({ namespace, deploymentName: deployment });
    if (!workerDeploymentInfo) throw new DeploymentNotFoundError(`no worker deployment ${deployment} in ${namespace}`);
    return workerDeploymentInfo;
  } catch (error) {
    if (grpcCodeOf(error) === GRPC_STATUS.notFound)
      throw new DeploymentNotFoundError(
        `no worker deployment ${deployment} in namespace ${namespace}: no versioned msgflow worker has polled it yet`,
      );
    throw error;
  }
}

/** Open runs on a build, counted per msgflow workflow type (the count API groups by execution status only). */
export async function runsOnBuild(
  service: WorkflowService,
  namespace: string,
  deployment: string,
  buildId: string,
): Promise<BuildRuns> {
  const onBuild = `TemporalWorkerDeploymentVersion = ${quoted(deploymentVersionSearchValue(deployment, buildId))} AND ExecutionStatus = 'Running'`;
  const pinned = `TemporalWorkflowVersioningBehavior = 'Pinned'`;
  const count = async (query: string) =>
    Number((await service.countWorkflowExecutions({ namespace, query })).count ?? 0);
  const [total, totalPinned, perType] = await Promise.all([
    count(onBuild),
    count(`${onBuild} AND ${pinned}`),
    Promise.all(
      MSGFLOW_WORKFLOW_TYPES.map(async (type) => {
        const ofType = `${onBuild} AND WorkflowType = '${type}'`;
        const [running, pinnedRuns] = await Promise.all([count(ofType), count(`${ofType} AND ${pinned}`)]);
        return { type, running, pinned: pinnedRuns };
      }),
    ),
  ]);
  const running: Record<string, number> = {};
  const pinnedByType: Record<string, number> = {};
  for (const { type, running: n, pinned: p } of perType) {
    if (n > 0) running[type] = n;
    if (p > 0) pinnedByType[type] = p;
  }
  const other = total - perType.reduce((sum, { running: n }) => sum + n, 0);
  if (other > 0) running.other = other;
  return { running, pinned: totalPinned, pinnedByType };
}

/** A string literal of the visibility query language. */
function quoted(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

function enumWord(values: Record<string, unknown>, value: unknown, prefix: string): string {
  const name = typeof value === 'number' ? Object.keys(values).find((key) => values[key] === value) : String(value);
  return (name ?? 'unspecified').replace(prefix, '').toLowerCase();
}
