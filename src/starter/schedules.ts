/**
 * Scheduled reminder campaigns: Temporal Schedules whose action starts `smsCampaign`. Each run reads its
 * audience when it starts (a file, URL or loader source), so a reminder reaches whoever is due then.
 * Every run's workflow id is `campaign:<schedule id>-<scheduled time>` (Temporal appends the time).
 *
 * A one-off "send at" is a schedule with a single calendar match at that instant (UTC) and one remaining
 * action: it stays listed, with nothing left to run, until deleted; `trigger` can still run it by hand.
 */
import {
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  ScheduleOverlapPolicy,
  type ScheduleSpec,
  type ScheduleUpdateOptions,
} from '@temporalio/client';
import type { z } from 'zod';
import {
  CampaignInput,
  CampaignScheduleInput,
  CampaignScheduleUpdate,
  type OverlapPolicy,
  OverlapPolicy as OverlapPolicySchema,
  ScheduleId,
  MONTHS,
  ScheduleTiming,
} from '../api/campaign-io.js';
import { SA } from '../definitions/search-attributes.js';
import { campaignWorkflowId } from '../definitions/workflow-ids.js';
import { campaignSummary } from './campaigns.js';
import { validate } from './validate.js';

const WORKFLOW_TYPE = 'smsCampaign';
/** The timing as given is kept in the action's memo, so `describe` shows it and `update` can merge into it. */
const TIMING_MEMO = 'msgflowScheduleTiming';

const OVERLAP: Record<OverlapPolicy, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  buffer_all: ScheduleOverlapPolicy.BUFFER_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  terminate_other: ScheduleOverlapPolicy.TERMINATE_OTHER,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

export interface ScheduledRun {
  workflowId: string;
  scheduledAt: string;
  startedAt: string;
}

export interface CampaignScheduleSummary {
  id: string;
  paused: boolean;
  note: string | null;
  nextRuns: string[];
  recentRuns: ScheduledRun[];
}

export interface CampaignScheduleInfo extends CampaignScheduleSummary {
  timing: ScheduleTiming | null;
  timeZone: string;
  policies: { overlap: OverlapPolicy; catchupWindowMs: number; pauseOnFailure: boolean };
  /** Runs the schedule may still start on its own; null: no limit. */
  remainingRuns: number | null;
  runsStarted: number;
  /** Workflow ids of runs still going. */
  running: string[];
  campaign: CampaignInput;
  createdAt: string;
}

export class CampaignSchedules {
  constructor(
    readonly client: Client,
    readonly taskQueue: string,
  ) {}

  async create(input: CampaignScheduleInput): Promise<CampaignScheduleInfo> {
    const parsed = validate(CampaignScheduleInput, input, 'Invalid campaign schedule');
    const { spec, remainingActions } = compileTiming(parsed.timing);
    await this.client.schedule.create({
      scheduleId: parsed.id,
      spec,
      action: this.action(parsed.id, parsed.campaign, parsed.timing),
      policies: policiesOf(parsed.policies ?? {}),
      state: { paused: parsed.paused ?? false, note: parsed.note, remainingActions },
    });
    return this.describe(parsed.id);
  }

  /**
   * The schedules whose action starts `smsCampaign`. Listing is eventually consistent: a new one may take a
   * moment to appear.
   */
  async list(): Promise<CampaignScheduleSummary[]> {
    const schedules: CampaignScheduleSummary[] = [];
    for await (const summary of this.client.schedule.list()) {
      if (summary.action?.workflowType !== WORKFLOW_TYPE) continue;
      schedules.push({
        id: summary.scheduleId,
        paused: summary.state.paused,
        note: summary.state.note || null,
        nextRuns: summary.info.nextActionTimes.map((d) => d.toISOString()),
        recentRuns: summary.info.recentActions.map(runOf),
      });
    }
    return schedules.sort((a, b) => a.id.localeCompare(b.id));
  }

  async describe(id: string): Promise<CampaignScheduleInfo> {
    return infoOf(await this.handle(id).describe());
  }

  async pause(id: string, note?: string): Promise<void> {
    await this.handle(id).pause(note);
  }

  async unpause(id: string, note?: string): Promise<void> {
    await this.handle(id).unpause(note);
  }

  /** Runs the campaign now, whatever the timing (overlap: the schedule's policy unless given). */
  async trigger(id: string, overlap?: OverlapPolicy): Promise<void> {
    const policy =
      overlap === undefined ? undefined : OVERLAP[validate(OverlapPolicySchema, overlap, 'Invalid overlap policy')];
    await this.handle(id).trigger(policy);
  }

  /**
   * Changes timing, campaign or policies. Timing fields merge into the current ones (a new `at` replaces the
   * recurring specs and the other way round); `campaign` fields merge into the current campaign.
   */
  async update(id: string, changes: z.input<typeof CampaignScheduleUpdate>): Promise<CampaignScheduleInfo> {
    const parsed = validate(CampaignScheduleUpdate, changes, 'Invalid schedule update');
    await this.handle(id).update((previous): ScheduleUpdateOptions => {
      const before = infoOf(previous);
      const campaign = parsed.campaign
        ? validate(CampaignInput, { ...before.campaign, ...parsed.campaign }, 'Invalid campaign')
        : before.campaign;
      const timing = parsed.timing
        ? validate(ScheduleTiming, mergeTiming(before.timing, parsed.timing), 'Invalid timing')
        : before.timing;
      if (!timing) throw new Error(`schedule ${id} was not created by msgflow (no timing in its memo): recreate it`);
      const compiled = compileTiming(timing);
      const timingChanged = parsed.timing !== undefined;
      return {
        spec: compiled.spec,
        action: this.action(id, campaign, timing),
        policies: policiesOf({
          overlap: parsed.policies?.overlap ?? before.policies.overlap,
          catchupWindowMs: parsed.policies?.catchupWindowMs ?? before.policies.catchupWindowMs,
          pauseOnFailure: parsed.policies?.pauseOnFailure ?? before.policies.pauseOnFailure,
        }),
        state: {
          paused: previous.state.paused,
          note: previous.state.note,
          remainingActions: timingChanged ? compiled.remainingActions : previous.state.remainingActions,
        },
      };
    });
    return this.describe(id);
  }

  async delete(id: string): Promise<void> {
    await this.handle(id).delete();
  }

  private handle(id: string): ScheduleHandle {
    return this.client.schedule.getHandle(validate(ScheduleId, id, 'Invalid schedule id'));
  }

  private action(id: string, campaign: CampaignInput, timing: ScheduleTiming) {
    return {
      type: 'startWorkflow' as const,
      workflowType: WORKFLOW_TYPE,
      taskQueue: this.taskQueue,
      args: [campaign],
      workflowId: campaignWorkflowId(id),
      typedSearchAttributes: [
        { key: SA.kind, value: 'campaign' },
        { key: SA.campaignKey, value: id },
        { key: SA.sender, value: campaign.sender },
      ],
      memo: { [TIMING_MEMO]: timing },
      staticSummary: `${campaignSummary(campaign)} (schedule ${id})`,
    };
  }
}

/** Temporal's spec for a timing; a one-off `at` becomes one calendar match in UTC with one action left. */
export function compileTiming(timing: ScheduleTiming): { spec: ScheduleSpec; remainingActions?: number } {
  const common = {
    jitter: timing.jitterMs,
    startAt: timing.startAt ? new Date(timing.startAt) : undefined,
    endAt: timing.endAt ? new Date(timing.endAt) : undefined,
  };
  if (timing.at) {
    const at = new Date(timing.at);
    return {
      spec: {
        ...common,
        calendars: [
          {
            year: at.getUTCFullYear(),
            month: MONTHS[at.getUTCMonth()]!,
            dayOfMonth: at.getUTCDate(),
            hour: at.getUTCHours(),
            minute: at.getUTCMinutes(),
            second: at.getUTCSeconds(),
            comment: `once at ${timing.at}`,
          },
        ],
        timezone: 'UTC',
      },
      remainingActions: 1,
    };
  }
  return {
    spec: {
      ...common,
      cronExpressions: timing.cron,
      calendars: timing.calendars as ScheduleSpec['calendars'],
      intervals: timing.intervals?.map((i) => ({ every: i.everyMs, offset: i.offsetMs })),
      timezone: timing.timeZone,
    },
  };
}

/** Merges a timing change into the current timing: one-off and recurring forms replace each other. */
export function mergeTiming(
  before: ScheduleTiming | null,
  change: z.input<typeof ScheduleTiming>,
): z.input<typeof ScheduleTiming> {
  const base: z.input<typeof ScheduleTiming> = { ...(before ?? {}) };
  const recurring = change.cron !== undefined || change.calendars !== undefined || change.intervals !== undefined;
  if (change.at !== undefined) {
    delete base.cron;
    delete base.calendars;
    delete base.intervals;
  }
  if (recurring) {
    delete base.at;
    delete base.cron;
    delete base.calendars;
    delete base.intervals;
  }
  const merged: Record<string, unknown> = { ...base };
  for (const [field, value] of Object.entries(change)) if (value !== undefined) merged[field] = value;
  return merged as z.input<typeof ScheduleTiming>;
}

function policiesOf(policies: { overlap?: OverlapPolicy; catchupWindowMs?: number; pauseOnFailure?: boolean }) {
  return {
    overlap: OVERLAP[policies.overlap ?? 'skip'],
    catchupWindow: policies.catchupWindowMs,
    pauseOnFailure: policies.pauseOnFailure,
  };
}

function runOf(result: {
  scheduledAt: Date;
  takenAt: Date;
  action: { workflow: { workflowId: string } };
}): ScheduledRun {
  return {
    workflowId: result.action.workflow.workflowId,
    scheduledAt: result.scheduledAt.toISOString(),
    startedAt: result.takenAt.toISOString(),
  };
}

function infoOf(description: ScheduleDescription): CampaignScheduleInfo {
  const overlap = (Object.entries(OVERLAP).find(([, policy]) => policy === description.policies.overlap)?.[0] ??
    'skip') as OverlapPolicy;
  const timing = ScheduleTiming.safeParse(description.action.memo?.[TIMING_MEMO]);
  return {
    id: description.scheduleId,
    paused: description.state.paused,
    note: description.state.note || null,
    timing: timing.success ? timing.data : null,
    timeZone: description.spec.timezone ?? 'UTC',
    policies: {
      overlap,
      catchupWindowMs: description.policies.catchupWindow,
      pauseOnFailure: description.policies.pauseOnFailure,
    },
    remainingRuns: description.state.remainingActions ?? null,
    runsStarted: description.info.numActionsTaken,
    nextRuns: description.info.nextActionTimes.map((d) => d.toISOString()),
    recentRuns: description.info.recentActions.map(runOf),
    running: description.info.runningActions.map((a) => a.workflow.workflowId),
    campaign: description.action.args?.[0] as CampaignInput,
    createdAt: description.info.createdAt.toISOString(),
  };
}
