/**
 * The fault run's workload, the parts that each stand for one promise of msgflow's: two teams' campaigns
 * sharing the token by weight; a number opted out and erased while sends still target it; a campaign retried
 * to its failed recipients once it completed; a reminder schedule firing. Each records what it did in the
 * WorkloadLog, for the checker (checker-promises.ts) to judge.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_RETRY_STATUSES } from '../../../../src/api/campaign-retry.js';
import type { FinalStatus } from '../../../../src/api/constants.js';
import { seededRandom } from '../summary.js';
import type { CampaignRecord, WorkloadContext } from './workload.js';

/** The teams sharing the token, with the weights the rig's workers are given (MSGFLOW_TEAM_WEIGHTS). */
export const TEAM_WEIGHTS: Readonly<Record<string, number>> = { clinic: 3, marketing: 1 };

/** MSGFLOW_TEAM_WEIGHTS for TEAM_WEIGHTS, e.g. `clinic:3,marketing:1`. */
export function teamWeightsEnv(weights: Readonly<Record<string, number>> = TEAM_WEIGHTS): string {
  return Object.entries(weights)
    .map(([team, weight]) => `${team}:${weight}`)
    .join(',');
}

export interface ErasureRecord {
  /** The number erased (digits). */
  number: string;
  /** Single sends to it before the erasure; `closed`: its workflow had closed before the erasure was asked. */
  before: Array<{ key: string; workflowId?: string; closed: boolean }>;
  /** Single sends to it started once the erasure had answered: each must leave it out. */
  after: Array<{ key: string; workflowId?: string; startedMs: number }>;
  /** Since the run's start: when the erasure was asked, and when it answered. */
  askedMs?: number;
  answeredMs?: number;
  /** Message rows the erasure said no longer name the number. */
  erasedRows?: number;
  steps: string[];
}

/** The numbers of each part, by prefix (see workload.ts for the others'). */
const PREFIXES = {
  erased: '234801',
  reminders: '234802',
  retried: '234804',
  clinic: '234808',
  marketing: '234809',
} as const;
/** The outcomes the retried campaign's recipients are told, in turn: the retry resends to three of the five. */
const RETRIED_OUTCOMES: FinalStatus[] = ['failed', 'delivered', 'undelivered', 'rejected', 'expired'];
/** The teams' campaigns start this long before the workload's end (halfway through, at the earliest). */
const TEAMS_BEFORE_END_MS = 10_000;
/**
 * The marketing team's recipients at most (the clinic's 1.5 ×): one request each, at the workers' two requests a
 * second (run.ts), 150 recipients take about 75 s, well inside liveness's bound after the run's end. Sized by
 * `campaignRecipients` alone, a long run's teams (1,275 recipients at 3,000) were still sending past it.
 */
const TEAM_CAMPAIGN_MAX = 60;
/** How long a part waits for a campaign or send to close before it goes on without (a 429 fault may hold one for minutes). */
const CLOSE_PATIENCE_MS = 240_000;

/** The parts, each running on its own clock; they draw from a random stream of their own. */
export function workloadPromises(context: WorkloadContext): Array<Promise<unknown>> {
  const random = seededRandom(context.options.seed ^ 0xfa11);
  const erased = `${PREFIXES.erased}1000000`;
  return [
    teamCampaigns(context, random),
    retriedCampaign(context, random),
    reminderSchedule(context, erased),
    erasure(context, erased, random),
  ];
}

/**
 * One campaign per team, started together shortly before the workload's end, so that they meet its last faults
 * and then send on, both at once, through the fault-free end (where most of what is judged is sent: on any
 * seed, enough to judge). One request per recipient (chunks of one), so sends and requests are the same count.
 * The clinic's (weight 3) is 1.5 × the marketing's: with the weights it runs out first, with the marketing's at
 * half; with the weights ignored (1:1) the marketing's runs out first, with the clinic's at two thirds. Either
 * way both send long enough to be judged.
 */
async function teamCampaigns(context: WorkloadContext, random: () => number): Promise<void> {
  const marketing = Math.min(TEAM_CAMPAIGN_MAX, Math.max(20, Math.round(context.options.campaignRecipients * 0.17)));
  const sizes: Record<string, number> = { clinic: Math.round(marketing * 1.5), marketing };
  const records: CampaignRecord[] = Object.keys(TEAM_WEIGHTS).map((team) => ({
    key: `chaos-${context.options.seed}-${team}`,
    audience: numbers(PREFIXES[team as 'clinic' | 'marketing'], sizes[team] ?? marketing),
    fate: 'complete',
    steps: [],
    team,
  }));
  context.result.campaigns.push(...records);
  // Late, so that most of their sending falls in the fault-free end, where their shares are judged on any seed.
  const untilMs = context.options.untilMs;
  await sleep(Math.max(untilMs * 0.5, untilMs - TEAMS_BEFORE_END_MS) + random() * 2_000);
  await Promise.all(records.map((record) => context.startCampaign(record, { team: record.team, chunkSize: 1 })));
}

/**
 * A campaign whose recipients were told outcomes of every final state; once it closed, `retryCampaign` resends
 * to the failed, undelivered and expired (the outcomes stay forced: the resends end the same way).
 */
async function retriedCampaign(context: WorkloadContext, random: () => number): Promise<void> {
  const { msgflow, admin, patiently, since } = context;
  const first: CampaignRecord = {
    key: `chaos-${context.options.seed}-retried`,
    audience: numbers(PREFIXES.retried, 20),
    fate: 'complete',
    steps: [],
  };
  const outcomes = first.audience.map((_, i) => RETRIED_OUTCOMES[i % RETRIED_OUTCOMES.length]!);
  context.result.campaigns.push(first);
  await sleep(context.options.untilMs * 0.1 * random());
  for (const [i, number] of first.audience.entries())
    await patiently('setOutcome', () => admin.setOutcome(number, outcomes[i]!));
  // One chunk: its request does not wait long in the default team's line behind the main campaign's. No
  // pre-flight (the main campaign has one): its price and balance calls would wait in that line too, a minute
  // and more at the workers' two requests a second, and the retry, which copies the input, again.
  const run = await context.startCampaign(first, { chunkSize: first.audience.length, preflight: false });
  if (!run) return;
  if (!(await untilClosed(context, run.workflowId))) {
    first.steps.push('never closed: not retried');
    return;
  }
  first.steps.push(`closed +${(since() / 1000).toFixed(1)}s`);
  const retry: CampaignRecord = {
    key: `${first.key}:retry`,
    audience: first.audience.filter((_, i) => DEFAULT_RETRY_STATUSES.some((s) => s === outcomes[i])),
    fate: 'complete',
    steps: [],
    retryOf: first.key,
  };
  context.result.campaigns.push(retry);
  try {
    const again = await patiently(`retryCampaign ${first.key}`, () => msgflow.retryCampaign(first.key));
    retry.workflowId = again.workflowId;
    retry.steps.push(`started +${(since() / 1000).toFixed(1)}s`);
  } catch (error) {
    retry.steps.push(`never started: ${(error as Error).message}`);
  }
}

/**
 * A reminder schedule firing every third of the workload's time (20 s at least: 2 or 3 runs), to five numbers
 * of its own and the erased one. Paused a little before the workload ends (a pause delayed by a fault would
 * let one more run in), its runs read from its recent actions, then deleted: each run is a campaign the
 * checker judges.
 */
async function reminderSchedule(context: WorkloadContext, erased: string): Promise<void> {
  const { msgflow, patiently, since, options } = context;
  const id = `chaos-${options.seed}-reminders`;
  const everyMs = Math.max(20_000, Math.round(options.untilMs / 3 / 1000) * 1000);
  const audience = [...numbers(PREFIXES.reminders, 5), erased];
  const schedules = msgflow.campaignSchedules;
  try {
    await patiently(`schedule ${id}`, () =>
      schedules
        .create({
          id,
          timing: { intervals: [{ everyMs }] },
          campaign: {
            sender: 'ACME',
            message: 'chaos reminder',
            audience: { type: 'inline', recipients: audience },
            chunkSize: 3,
            // As the retried campaign: no price and balance calls waiting in the default team's line.
            preflight: false,
          },
          // A run still waiting for its outcomes when the next is due does not hold that one back.
          policies: { overlap: 'allow_all' },
        })
        .catch((error: unknown) => {
          // A create retried after it reached the server finds its schedule there.
          if (!/already/i.test(`${(error as Error).name} ${(error as Error).message}`)) throw error;
        }),
    );
  } catch (error) {
    context.log(`schedule ${id} never created: ${(error as Error).message}`);
    return;
  }
  await sleep(Math.max(0, options.untilMs * 0.9 - since()));
  try {
    await patiently(`pause ${id}`, () => schedules.pause(id, 'the fault run ends'));
    const { recentRuns } = await patiently(`describe ${id}`, () => schedules.describe(id));
    for (const run of recentRuns)
      context.result.campaigns.push({
        key: run.workflowId.replace(/^campaign:/, ''),
        workflowId: run.workflowId,
        audience,
        fate: 'complete',
        steps: [`fired ${run.startedAt}`],
        scheduleId: id,
      });
    await patiently(`delete ${id}`, () => schedules.delete(id));
  } catch (error) {
    context.log(`schedule ${id}: ${(error as Error).message}`);
  }
}

/**
 * A person who asks to be forgotten: a send reaches their number, then they opt out and their number is
 * erased (msgflow's erasure keeps the opt-out, without the number), while the reminder schedule still lists
 * it; then two more sends to it, each of which must leave it out.
 */
async function erasure(context: WorkloadContext, number: string, random: () => number): Promise<void> {
  const { msgflow, patiently, since, options } = context;
  const record: ErasureRecord = { number, before: [], after: [], steps: [] };
  context.result.erasure = record;
  const sendSms = (key: string) =>
    patiently(`sendSms ${key}`, () =>
      msgflow.sendSms({ recipients: [number], sender: 'ACME', message: 'chaos, erased later' }, { key }),
    );
  await sleep(options.untilMs * (0.15 + random() * 0.1));
  // The send before: the store then names the number in a message row, which the erasure must clear.
  const before: ErasureRecord['before'][number] = { key: `chaos-${options.seed}-erased-before`, closed: false };
  record.before.push(before);
  try {
    before.workflowId = (await sendSms(before.key)).workflowId;
    before.closed = await untilClosed(context, before.workflowId);
  } catch (error) {
    record.steps.push(`send before: ${(error as Error).message}`);
  }
  try {
    await patiently('suppressions.add', () => msgflow.suppressions.add([`+${number}`], { reason: 'erasure' }));
    record.askedMs = since();
    const erased = await patiently('eraseNumber', () => msgflow.eraseNumber(`+${number}`));
    record.answeredMs = since();
    record.erasedRows = erased.store.messages;
    record.steps.push(`erased +${(record.answeredMs / 1000).toFixed(1)}s (${erased.store.messages} row(s))`);
  } catch (error) {
    record.steps.push(`never erased: ${(error as Error).message}`);
    return;
  }
  for (let i = 1; i <= 2; i++) {
    const after: ErasureRecord['after'][number] = {
      key: `chaos-${options.seed}-erased-after-${i}`,
      startedMs: since(),
    };
    record.after.push(after);
    try {
      after.workflowId = (await sendSms(after.key)).workflowId;
    } catch (error) {
      record.steps.push(`send after: ${(error as Error).message}`);
    }
    await sleep(3_000 + random() * 3_000);
  }
}

/** Whether the workflow closed within CLOSE_PATIENCE_MS (faults may fail the describe calls meanwhile). */
async function untilClosed(context: WorkloadContext, workflowId: string): Promise<boolean> {
  const deadline = Date.now() + CLOSE_PATIENCE_MS;
  while (Date.now() < deadline) {
    try {
      const { status } = await context.msgflow.client.workflow.getHandle(workflowId).describe();
      if (status.name !== 'RUNNING') return true;
    } catch {
      // a fault: ask again
    }
    await sleep(1_000);
  }
  return false;
}

function numbers(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(1_000_000 + i)}`);
}
