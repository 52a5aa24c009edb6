/**
 * A deploy of a new build over the rig's running one, as docs/operations.md has an operator do it: the new
 * build's workers start beside the old ones (this checkout's code under a new build id), a share of new runs is
 * ramped to it, it is made current (the RPCs `temporal worker deployment set-ramping-version` and
 * `set-current-version` call), and the old build's workers stop only once `msgflow deployment status` says they
 * may: no run pinned to the old build is left (pinned runs, single sends and OTP sessions, finish on their build).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { currentRouting, makeBuildCurrent } from '../../../src/temporal/worker-deployment.js';
import { deploymentStatus } from '../../../src/temporal/deployment-status.js';
import type { ClusterRig } from './rig.js';
import type { Replica } from './topology.js';

export interface RolloutOptions {
  /** The share of new runs the new build gets before it is made current (0: promoted at once). Default 50. */
  rampPercentage?: number;
  /** How long each step may take through faults (Temporal down, PostgreSQL stopped). Default 10 minutes. */
  patienceMs?: number;
  log?: (line: string) => void;
}

export interface Rollout {
  oldBuildId: string;
  newBuildId: string;
  /** Makes the new build current; its workers become the rig's `worker-1`, `worker-2`, … */
  promote(): Promise<void>;
  /** Waits until the deployment's status says the old build may stop, then stops its workers. */
  retireOld(): Promise<void>;
}

/** The previous rollout of each rig: a deploy starts once the one before it has retired its old build. */
const rolloutsOf = new WeakMap<ClusterRig, Promise<unknown>>();

/**
 * Starts the new build's workers beside the current build's and ramps new runs to it. The new build id is the
 * current one with `-2` appended (`-3`, … for later deploys): the same code, told apart by its id.
 */
export async function startRollout(rig: ClusterRig, options: RolloutOptions = {}): Promise<Rollout> {
  const previous = rolloutsOf.get(rig);
  let finished!: () => void;
  rolloutsOf.set(rig, new Promise<void>((resolve) => (finished = resolve)));
  await previous;
  try {
    return await rollout(rig, options, finished);
  } catch (error) {
    finished();
    throw error;
  }
}

async function rollout(rig: ClusterRig, options: RolloutOptions, finished: () => void): Promise<Rollout> {
  const log = options.log ?? (() => {});
  const patienceMs = options.patienceMs ?? 600_000;
  const service = rig.client.workflowService;
  const namespace = rig.infra.namespace;
  const deploymentName = rig.deploymentName;
  const patiently = <T>(what: string, step: () => Promise<T>) => retried(what, step, patienceMs);

  const oldBuildId = await patiently('reading the current build', async () => {
    const { current } = await currentRouting(service, namespace, deploymentName);
    if (!current) throw new Error(`worker deployment ${deploymentName} has no current build`);
    return current;
  });
  const newBuildId = nextBuildId(oldBuildId);
  log(`deploy: starting build ${newBuildId}'s workers beside ${oldBuildId}'s`);
  // As a supervisor would, started again while it exits at once (Temporal unreachable during a fault).
  const build = await patiently(`starting build ${newBuildId}`, () => rig.replicas.startBuild(newBuildId));
  log(`deploy: build ${newBuildId}'s workers running`);
  const rampPercentage = options.rampPercentage ?? 50;
  if (rampPercentage > 0) {
    await patiently(`ramping ${newBuildId}`, () =>
      service.setWorkerDeploymentRampingVersion({
        namespace,
        deploymentName,
        buildId: newBuildId,
        percentage: rampPercentage,
        identity: 'fault run deploy',
      }),
    );
    log(`deploy: build ${newBuildId} ramping (${rampPercentage}%)`);
  }
  let oldWorkers: Replica[] = [];
  return {
    oldBuildId,
    newBuildId,
    async promote() {
      await patiently(`making ${newBuildId} current`, () =>
        makeBuildCurrent(service, namespace, { deploymentName, buildId: newBuildId, makeCurrent: 'always' }),
      ).catch((error: unknown) => {
        finished();
        throw error;
      });
      oldWorkers = build.takeOver();
      log(`deploy: build ${newBuildId} current; ${oldBuildId} draining`);
    },
    async retireOld() {
      try {
        // As an operator's script does with `msgflow deployment status --build <old>`: the first `safe` stops it.
        const deadline = Date.now() + patienceMs;
        let lastSaid = '';
        for (;;) {
          if (Date.now() > deadline) throw new Error(`build ${oldBuildId} never safe to stop`);
          const status = await patiently('reading the deployment status', () =>
            deploymentStatus(service, namespace, deploymentName),
          );
          const old = status.builds.find((b) => b.buildId === oldBuildId);
          const said = old ? `${JSON.stringify(old.running)}: ${old.reason}` : 'not listed';
          if (said !== lastSaid) log(`deploy: build ${oldBuildId} ${(lastSaid = said)}`);
          if (old?.safeToStop) break;
          await sleep(1_000);
        }
        await Promise.all(oldWorkers.map((w) => w.retire()));
        log(`deploy: build ${oldBuildId} safe to stop; its workers stopped`);
      } finally {
        finished();
      }
    },
  };
}

/** `abc` → `abc-2`, `abc-2` → `abc-3`. */
export function nextBuildId(buildId: string): string {
  const numbered = /^(.*)-(\d+)$/.exec(buildId);
  return numbered ? `${numbered[1]}-${Number(numbered[2]) + 1}` : `${buildId}-2`;
}

/** Repeats `step` every 2 s while it fails, for up to `patienceMs`. */
async function retried<T>(what: string, step: () => Promise<T>, patienceMs: number): Promise<T> {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    try {
      return await step();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
      await sleep(2_000);
    }
  }
}
