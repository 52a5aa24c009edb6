/**
 * The nemesis's plan: from a seed, which faults strike which part of the topology, when, and for how long.
 * A pure function of the seed and the run's length, so a failing seed's schedule replays exactly (the
 * processes' own timing around it does not). Faults never overlap on one target, at most `maxConcurrent`
 * are active at once, and the last ends `quietMs` before the run does: the fault-free period before judging.
 */
import { seededRandom } from '../summary.js';

/** What a fault does, and the part of the topology it strikes (see nemesis.ts for how each is applied). */
export const FAULT_KINDS = {
  /** SIGKILL, then started again after the duration. */
  'kill-worker': ['worker-1', 'worker-2'],
  'kill-ingress': ['ingress-1', 'ingress-2'],
  'kill-temporal': ['temporal-1', 'temporal-2'],
  /**
   * An ingress cut off from Temporal (its own link) while it records webhooks, then SIGKILLed with the outcomes
   * it could not tell, started again after the duration: the other relays must find and tell them.
   */
  'kill-ingress-untold': ['ingress-1', 'ingress-2'],
  /** SIGSTOP, SIGCONT after the duration: a process that hangs without dying. */
  'pause-worker': ['worker-1', 'worker-2'],
  'pause-ingress': ['ingress-1', 'ingress-2'],
  'pause-temporal': ['temporal-1', 'temporal-2'],
  /** PostgreSQL stopped and started: Temporal's persistence and the message store at once. */
  'stop-postgres': ['postgres'],
  /** msgflow's connections through a proxy refused (`cut`) or left hanging (`hold`). */
  'cut-network': ['to-temporal', 'to-provider', 'to-store'],
  'hold-network': ['to-temporal', 'to-provider', 'to-store'],
  /** …or slowed: every chunk held half a second each way. */
  'slow-network': ['to-temporal', 'to-provider', 'to-store'],
  /** The provider refuses the account's calls: 429 (rate limit of one a minute) or 500. */
  'provider-429': ['provider'],
  'provider-5xx': ['provider'],
  /**
   * The provider's webhooks: held (deliveries paused), duplicated, delayed at random (reordered), or followed by
   * a late receipt with another final state (contradicted; the provider keeps the first).
   */
  'webhooks-held': ['webhooks'],
  'webhooks-duplicated': ['webhooks'],
  'webhooks-reordered': ['webhooks'],
  'webhooks-contradicted': ['webhooks'],
  /** …or sent to a dead ingress: the address they go to (the ingresses' load balancer) refuses every connection. */
  'webhooks-to-dead-ingress': ['balancer'],
  /**
   * A new build deployed and promoted: its workers start beside the old ones and are ramped to for the
   * duration (counted once they run), then made current; it heals once the old build is safe to stop and stopped (often well after the
   * planned duration: its pinned runs finish first). Every run of a minute or more has one (see plannedDeploy).
   */
  deploy: ['deployment'],
} as const satisfies Record<string, readonly string[]>;

export type FaultKind = keyof typeof FAULT_KINDS;
export const ALL_FAULT_KINDS = Object.keys(FAULT_KINDS) as FaultKind[];

export interface Fault {
  /** Since the run's start. */
  atMs: number;
  kind: FaultKind;
  target: string;
  durationMs: number;
}

export interface ScheduleOptions {
  /** The whole run, the quiet period included. */
  runMs: number;
  /** Fault-free time at the end, before the run is judged. */
  quietMs: number;
  /** Mean gap between one fault's start and the next's. Default 4 s. */
  meanGapMs?: number;
  /** Faults that may be active at once. Default 2. */
  maxConcurrent?: number;
  /** The kinds to draw from. Default all. */
  kinds?: readonly FaultKind[];
  /** Nothing in the first moments, while the workload starts. Default 3 s. */
  leadInMs?: number;
}

/** Each kind's shortest and longest duration, ms: long enough to meet traffic, short of any give-up. */
const DURATIONS: Record<FaultKind, [number, number]> = {
  'kill-worker': [1_000, 8_000],
  'kill-ingress': [1_000, 8_000],
  'kill-temporal': [2_000, 8_000],
  'kill-ingress-untold': [4_000, 12_000],
  'pause-worker': [1_000, 8_000],
  'pause-ingress': [1_000, 8_000],
  'pause-temporal': [1_000, 6_000],
  'stop-postgres': [2_000, 8_000],
  'cut-network': [1_000, 8_000],
  'hold-network': [1_000, 8_000],
  'slow-network': [2_000, 15_000],
  'provider-429': [3_000, 15_000],
  'provider-5xx': [2_000, 10_000],
  'webhooks-held': [3_000, 20_000],
  'webhooks-duplicated': [5_000, 20_000],
  'webhooks-reordered': [5_000, 20_000],
  'webhooks-contradicted': [5_000, 20_000],
  'webhooks-to-dead-ingress': [2_000, 20_000],
  deploy: [2_000, 5_000],
};

/** A deploy drains its old build for a minute or more after its planned end: drawn ones keep this far apart. */
const DEPLOY_SPACING_MS = 180_000;

export function generateSchedule(seed: number, options: ScheduleOptions): Fault[] {
  const random = seededRandom(seed);
  const kinds = options.kinds ?? ALL_FAULT_KINDS;
  if (kinds.length === 0) throw new Error('a schedule needs at least one fault kind');
  const meanGapMs = options.meanGapMs ?? 4_000;
  const maxConcurrent = options.maxConcurrent ?? 2;
  const endMs = options.runMs - options.quietMs;
  const between = (min: number, max: number) => Math.round(min + random() * (max - min));
  const leadInMs = options.leadInMs ?? 3_000;
  const faults: Fault[] = kinds.includes('deploy') ? plannedDeploy(seed, options.runMs, leadInMs, endMs) : [];
  let atMs = leadInMs;
  for (;;) {
    // Exponential gaps (a Poisson process), at least half a second apart.
    atMs += Math.max(500, Math.round(-Math.log(1 - random()) * meanGapMs));
    if (atMs >= endMs) break;
    const kind = kinds[Math.floor(random() * kinds.length)]!;
    const targets = FAULT_KINDS[kind];
    const target = targets[Math.floor(random() * targets.length)]!;
    const [min, max] = DURATIONS[kind];
    const durationMs = Math.min(between(min, max), endMs - atMs);
    const active = faults.filter((f) => f.atMs + f.durationMs > atMs);
    // Skipped (the draw still made, so later faults do not shift): too many at once, or the target is struck.
    if (active.length >= maxConcurrent || active.some((f) => f.target === target) || durationMs < min) continue;
    if (kind === 'deploy' && faults.some((f) => f.kind === 'deploy' && Math.abs(atMs - f.atMs) < DEPLOY_SPACING_MS))
      continue;
    faults.push({ atMs, kind, target, durationMs });
  }
  return faults.sort((a, b) => a.atMs - b.atMs);
}

/**
 * The deploy every run of a minute or more has, so each of CI's short seeds deploys once: at a moment between
 * 20 % and 40 % of the fault period (early enough that its old build's last pinned runs, OTP sessions of up to
 * 30 s, end about when the workload does), drawn from a stream of its own (the other faults' draws stay as they were).
 */
function plannedDeploy(seed: number, runMs: number, leadInMs: number, endMs: number): Fault[] {
  if (runMs < 60_000) return [];
  const random = seededRandom(seed ^ 0xde9107);
  const [min, max] = DURATIONS.deploy;
  const atMs = Math.round(leadInMs + (0.2 + random() * 0.2) * (endMs - leadInMs));
  const durationMs = Math.min(Math.round(min + random() * (max - min)), endMs - atMs);
  return durationMs < min ? [] : [{ atMs, kind: 'deploy', target: 'deployment', durationMs }];
}

/** Faults counted by kind, every kind of FAULT_KINDS present (0 when drawn never). */
export function faultsByKind(faults: readonly Fault[]): Record<FaultKind, number> {
  const counts = Object.fromEntries(ALL_FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  for (const f of faults) counts[f.kind]++;
  return counts;
}

/** One line per fault, e.g. `+12.3s kill-worker worker-1 for 4.0s`. */
export function describeFault(f: Fault): string {
  return `+${(f.atMs / 1000).toFixed(1)}s ${f.kind} ${f.target} for ${(f.durationMs / 1000).toFixed(1)}s`;
}
