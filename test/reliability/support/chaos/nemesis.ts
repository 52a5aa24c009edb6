/**
 * The nemesis: applies a schedule's faults to the cluster rig at their moments and heals each after its
 * duration, logging both with the time they really happened (process timing shifts them from the plan).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebhookChaos } from '../../../../src/sandbox/index.js';
import { type Rollout, startRollout } from '../../../support/cluster/deploy.js';
import type { ClusterRig } from '../../../support/cluster/rig.js';
import type { RestartableProcess } from '../../../support/cluster/temporal-cluster.js';
import type { TcpProxy } from '../../../support/tcp-proxy.js';
import { METRICS } from '../../../../src/definitions/metric-names.js';
import { scrapeCounter } from '../../../support/metrics-text.js';
import { type Fault, describeFault } from './schedule.js';

/** A fault as it happened: applied at `atMs`, healed at `healedMs` (since the run's start). */
export interface FaultRecord {
  fault: Fault;
  atMs: number;
  healedMs: number;
  /** Why applying or healing it failed, if it did (the run goes on; the checker sees what it left). */
  error?: string;
  /**
   * From when, before its heal, it touches no new work: a deploy's promotion (its old build then only drains
   * its pinned runs, new runs start on the new build). See disturbsUntil.
   */
  quietFromMs?: number;
}

export interface NemesisTargets {
  rig: ClusterRig;
  /** The sandbox's webhook chaos, read by its dispatcher on every attempt: the nemesis turns it on and off. */
  webhookChaos: WebhookChaos;
  /** The account's normal rate limit, put back after a 429 fault. */
  ratePerMinute: number;
  /** A deploy's steps (build ids, promotion, the old build stopped). */
  log?: (line: string) => void;
}

/**
 * While duplicating, half of the successful deliveries go out twice; while contradicting, half are followed by a
 * late receipt with another final state; while reordering, each waits up to 3 s.
 */
const DUPLICATE_PROBABILITY = 0.5;
const CONTRADICT_PROBABILITY = 0.5;
const REORDER_DELAY_MS = 3_000;
/** A slowed connection holds each chunk this long, each way. */
const SLOW_NETWORK_MS = 500;
/** An ingress cut off from Temporal is killed once it answered this many deliveries, or after UNTOLD_FOR_MS. */
const UNTOLD_DELIVERIES = 3;
const UNTOLD_FOR_MS = 10_000;

/** Runs every fault of `schedule` from `startedAt`; resolves when the last is healed, with the log. */
export async function runNemesis(
  targets: NemesisTargets,
  schedule: readonly Fault[],
  startedAt: number,
  log: (line: string) => void = () => {},
): Promise<FaultRecord[]> {
  const records: FaultRecord[] = [];
  const since = () => Date.now() - startedAt;
  await Promise.all(
    schedule.map(async (fault) => {
      await sleep(Math.max(0, fault.atMs - since()));
      const record: FaultRecord = { fault, atMs: since(), healedMs: 0 };
      records.push(record);
      const { apply, heal } = actionsOf(targets, fault, () => (record.quietFromMs = since()));
      try {
        await apply();
        log(`+${(record.atMs / 1000).toFixed(1)}s fault ${describeFault(fault)}`);
      } catch (error) {
        record.error = `apply: ${(error as Error).message}`;
      }
      await sleep(Math.max(0, fault.atMs + fault.durationMs - since()));
      try {
        await heal();
      } catch (error) {
        record.error = `${record.error ?? ''} heal: ${(error as Error).message}`.trim();
      }
      record.healedMs = since();
      log(
        `+${(record.healedMs / 1000).toFixed(1)}s healed ${fault.kind} ${fault.target}${record.error ? ` (${record.error})` : ''}`,
      );
    }),
  );
  return records.sort((a, b) => a.atMs - b.atMs);
}

interface Actions {
  apply(): Promise<void>;
  heal(): Promise<void>;
}

function actionsOf(
  { rig, webhookChaos, ratePerMinute, log }: NemesisTargets,
  fault: Fault,
  quietFromNow: () => void,
): Actions {
  const { admin } = rig.provider;
  const accountId = rig.account.accountId;
  switch (fault.kind) {
    case 'kill-worker':
    case 'kill-ingress':
    case 'kill-temporal': {
      const target = processOf(rig, fault.target);
      return { apply: () => target.kill(), heal: () => startAsASupervisorWould(target) };
    }
    case 'kill-ingress-untold': {
      const target = processOf(rig, fault.target);
      const link = ingressLinkOf(rig, fault.target);
      return {
        apply: async () => {
          await link.cut();
          try {
            // Killed once it recorded outcomes it cannot tell (or gives up waiting for them, webhooks being faulted).
            await untilAccepted(rig, fault.target, UNTOLD_DELIVERIES, Math.max(UNTOLD_FOR_MS, fault.durationMs / 2));
            await target.kill();
          } finally {
            await link.restore();
          }
        },
        heal: () => startAsASupervisorWould(target),
      };
    }
    case 'pause-worker':
    case 'pause-ingress':
    case 'pause-temporal': {
      const target = processOf(rig, fault.target);
      let pid: number | undefined;
      return {
        apply: async () => {
          pid = target.pid();
          if (pid === undefined) throw new Error(`${target.name} is not running`);
          process.kill(pid, 'SIGSTOP');
        },
        heal: async () => {
          // Not when it is gone meanwhile: a deploy stops a replaced build's workers, paused or not.
          if (pid !== undefined && target.pid() === pid) process.kill(pid, 'SIGCONT');
        },
      };
    }
    case 'stop-postgres':
      return { apply: () => rig.infra.postgres.stop(), heal: () => rig.infra.postgres.start() };
    case 'cut-network': {
      const proxy = proxyOf(rig, fault.target);
      return { apply: () => proxy.cut(), heal: () => proxy.restore() };
    }
    case 'hold-network': {
      const proxy = proxyOf(rig, fault.target);
      return { apply: async () => proxy.hold(), heal: async () => proxy.release() };
    }
    case 'slow-network': {
      const proxy = proxyOf(rig, fault.target);
      return { apply: async () => proxy.slow(SLOW_NETWORK_MS), heal: async () => proxy.slow(0) };
    }
    case 'provider-429':
      return {
        apply: () => admin.setRateLimit(accountId, 1),
        heal: () => admin.setRateLimit(accountId, ratePerMinute),
      };
    case 'provider-5xx':
      return {
        apply: () => admin.setServerErrors(accountId, fault.durationMs),
        heal: () => admin.setServerErrors(accountId, 0),
      };
    case 'webhooks-held':
      return {
        apply: () => admin.setWebhooksPaused(accountId, true),
        heal: () => admin.setWebhooksPaused(accountId, false),
      };
    case 'webhooks-duplicated':
      return {
        apply: async () => void (webhookChaos.duplicateProbability = DUPLICATE_PROBABILITY),
        heal: async () => void (webhookChaos.duplicateProbability = 0),
      };
    case 'webhooks-reordered':
      return {
        apply: async () => void (webhookChaos.maxExtraDelayMs = REORDER_DELAY_MS),
        heal: async () => void (webhookChaos.maxExtraDelayMs = 0),
      };
    case 'webhooks-contradicted':
      return {
        apply: async () => void (webhookChaos.contradictProbability = CONTRADICT_PROBABILITY),
        heal: async () => void (webhookChaos.contradictProbability = 0),
      };
    case 'webhooks-to-dead-ingress': {
      const { balancer } = rig.replicas;
      return { apply: () => balancer.cut(), heal: () => balancer.restore() };
    }
    case 'deploy':
      return deployActions(rig, fault, quietFromNow, log);
  }
}

/**
 * Applied: the new build started and ramped to. Healed: after the fault's duration of ramping (counted from the
 * ramp, since its workers take a while to start), made current, and the old build retired once it is safe.
 */
function deployActions(rig: ClusterRig, fault: Fault, promoted: () => void, log?: (line: string) => void): Actions {
  let rollout: Rollout | undefined;
  let rampedAt = 0;
  return {
    apply: async () => {
      rollout = await startRollout(rig, { log });
      rampedAt = Date.now();
    },
    heal: async () => {
      if (!rollout) throw new Error('the rollout never started');
      await sleep(Math.max(0, rampedAt + fault.durationMs - Date.now()));
      await rollout.promote();
      promoted();
      await rollout.retireOld();
    },
  };
}

/**
 * Starts the process again, and again while it exits at once (a Temporal node started while PostgreSQL is
 * down does), every 2 s for up to a minute, as systemd's `Restart=always` or a container's restart policy would.
 */
async function startAsASupervisorWould(target: RestartableProcess): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await target.start();
      return;
    } catch (error) {
      if (attempt >= 30) throw error;
      await sleep(2_000);
    }
  }
}

function processOf(rig: ClusterRig, name: string): RestartableProcess {
  const all: RestartableProcess[] = [...rig.replicas.workers, ...rig.replicas.ingresses, ...rig.infra.temporal.nodes];
  const found = all.find((p) => p.name === name);
  if (!found) throw new Error(`no process ${name} in the rig (${all.map((p) => p.name).join(', ')})`);
  return found;
}

function proxyOf(rig: ClusterRig, target: string): TcpProxy {
  if (!rig.proxies) throw new Error('the rig was started without proxies');
  const proxies: Record<string, TcpProxy> = {
    'to-temporal': rig.proxies.toTemporal,
    'to-provider': rig.proxies.toProvider,
    'to-store': rig.proxies.toStore,
  };
  const proxy = proxies[target];
  if (!proxy) throw new Error(`no proxy ${target}`);
  return proxy;
}

/** Waits until the ingress answered `count` more deliveries (recorded them), for `timeoutMs` at most. */
async function untilAccepted(rig: ClusterRig, name: string, count: number, timeoutMs: number): Promise<void> {
  const url = `${rig.replicas.ingressUrls[rig.replicas.ingresses.findIndex((p) => p.name === name)]}/metrics`;
  // Unreadable (the ingress paused or down, or its store faulted): counted as nothing answered yet.
  const accepted = () => scrapeCounter(url, METRICS.ingressDeliveries, { status: '200' }).catch(() => undefined);
  const deadline = Date.now() + timeoutMs;
  let before = await accepted();
  for (;;) {
    const now = await accepted();
    before ??= now;
    if (Date.now() >= deadline || (before !== undefined && now !== undefined && now >= before + count)) return;
    await sleep(200);
  }
}

/** The ingress's own link to Temporal. */
function ingressLinkOf(rig: ClusterRig, name: string): TcpProxy {
  const index = rig.replicas.ingresses.findIndex((p) => p.name === name);
  const link = rig.proxies?.ingressToTemporal[index];
  if (!link) throw new Error(`no link to Temporal for ${name}`);
  return link;
}

/**
 * Until when a fault disturbs new work: its heal, or a deploy's promotion (then its old build only drains its
 * pinned runs). Quiet-latency and the teams' shares count what follows as fault-free.
 */
export function disturbsUntil(record: FaultRecord): number {
  return record.quietFromMs ?? record.healedMs;
}

/** Faults active within `marginMs` of `atMs` (since the run's start), for naming those around a violation. */
export function faultsAround(records: readonly FaultRecord[], atMs: number, marginMs = 10_000): string[] {
  return records
    .filter((r) => r.atMs - marginMs <= atMs && atMs <= r.healedMs + marginMs)
    .map((r) => describeFault({ ...r.fault, atMs: r.atMs, durationMs: r.healedMs - r.atMs }));
}
