/**
 * `msgflow schedule create|list|describe|pause|unpause|trigger|update|delete`: scheduled reminder campaigns
 * (Temporal Schedules whose action starts smsCampaign). Timing: --cron, --calendar, --every, or a one-off
 * --at, in --time-zone; the campaign flags are those of `msgflow campaign start`.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import { type Command, Option } from 'commander';
import { OverlapPolicy } from '../api/campaign-io.js';
import type { CampaignScheduleInfo, CampaignScheduleSummary } from '../starter/schedules.js';
import { addCampaignOptions, type CampaignFlags, campaignFieldsFrom, withMsgflow } from './campaign.js';
import { CliInputError, duration, fail, type JsonFlag, printResult, withJson } from './common.js';

interface TimingFlags {
  cron?: string[];
  calendar?: string[];
  every?: number;
  offset?: number;
  at?: string;
  timeZone?: string;
  jitter?: number;
  startAt?: string;
  endAt?: string;
}

interface PolicyFlags {
  overlap?: string;
  catchupWindow?: number;
  pauseOnFailure?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function addTimingOptions(command: Command): Command {
  return command
    .option('--cron <expr>', 'cron expression, e.g. "0 9 * * MON" (repeatable)', collect)
    .option('--calendar <json>', 'calendar match as JSON, e.g. {"dayOfWeek":"MONDAY","hour":9} (repeatable)', collect)
    .option('--every <duration>', 'interval, e.g. 1h, 1d or 12h30m', duration)
    .option('--offset <duration>', 'offset of --every, e.g. 9h with --every 1d', duration)
    .option('--at <iso>', 'one-off: send once at this time, e.g. 2026-03-02T09:00:00+01:00')
    .option('--time-zone <tz>', 'time zone of --cron and --calendar, e.g. Africa/Lagos')
    .option('--jitter <duration>', 'random delay added to each run, e.g. 5m', duration)
    .option('--start-at <iso>', 'no runs before this time')
    .option('--end-at <iso>', 'no runs after this time');
}

function addPolicyOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--overlap <policy>', 'when a run is due while the last still runs (default skip)').choices(
        OverlapPolicy.options,
      ),
    )
    .option('--catchup-window <duration>', 'how late a missed run may still start, e.g. 10m', duration)
    .option('--pause-on-failure', 'pause the schedule when a run fails');
}

function timingFrom(flags: TimingFlags): Record<string, unknown> | undefined {
  const timing: Record<string, unknown> = {};
  if (flags.cron?.length) timing.cron = flags.cron;
  if (flags.calendar?.length) timing.calendars = flags.calendar.map(parseCalendar);
  if (flags.every !== undefined)
    timing.intervals = [{ everyMs: flags.every, ...(flags.offset === undefined ? {} : { offsetMs: flags.offset }) }];
  else if (flags.offset !== undefined) throw new CliInputError('--offset needs --every');
  if (flags.at !== undefined) timing.at = flags.at;
  if (flags.timeZone !== undefined) timing.timeZone = flags.timeZone;
  if (flags.jitter !== undefined) timing.jitterMs = flags.jitter;
  if (flags.startAt !== undefined) timing.startAt = flags.startAt;
  if (flags.endAt !== undefined) timing.endAt = flags.endAt;
  return Object.keys(timing).length ? timing : undefined;
}

function parseCalendar(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw new CliInputError(`--calendar must be JSON, e.g. {"dayOfWeek":"MONDAY","hour":9}; got ${json}`);
  }
}

function policiesFrom(flags: PolicyFlags): Record<string, unknown> | undefined {
  const policies: Record<string, unknown> = {};
  if (flags.overlap !== undefined) policies.overlap = flags.overlap;
  if (flags.catchupWindow !== undefined) policies.catchupWindowMs = flags.catchupWindow;
  if (flags.pauseOnFailure) policies.pauseOnFailure = true;
  return Object.keys(policies).length ? policies : undefined;
}

function formatSummary(s: CampaignScheduleSummary): string {
  const last = s.recentRuns.at(-1);
  return [
    s.id,
    s.paused ? `paused${s.note ? ` (${s.note})` : ''}` : 'active',
    `next ${s.nextRuns[0] ?? '-'}`,
    `last ${last ? `${last.startedAt} ${last.workflowId}` : '-'}`,
  ].join('  ');
}

function formatInfo(info: CampaignScheduleInfo): string {
  const timing = info.timing ?? {};
  return [
    `schedule ${info.id}: ${info.paused ? `paused${info.note ? ` (${info.note})` : ''}` : 'active'}`,
    `  timing: ${JSON.stringify(timing)}`,
    `  overlap ${info.policies.overlap}, catch-up window ${info.policies.catchupWindowMs} ms${info.policies.pauseOnFailure ? ', pauses on failure' : ''}`,
    `  runs started: ${info.runsStarted}${info.remainingRuns === null ? '' : `, remaining: ${info.remainingRuns}`}`,
    `  next: ${info.nextRuns.slice(0, 3).join(', ') || '-'}${info.nextRuns.length > 3 ? ', …' : ''}`,
    `  recent: ${info.recentRuns.map((r) => r.workflowId).join(', ') || '-'}`,
    `  running: ${info.running.join(', ') || '-'}`,
    `  campaign: from ${info.campaign.sender}, audience ${info.campaign.audience.type}, message of ${info.campaign.message.length} characters${info.campaign.team ? `, team ${info.campaign.team}` : ''}`,
  ].join('\n');
}

/** Runs a schedule command; a missing or duplicate schedule is a clear message, not a stack trace. */
async function withSchedules(fn: Parameters<typeof withMsgflow>[0]): Promise<void> {
  await withMsgflow(async (msgflow, client) => {
    try {
      await fn(msgflow, client);
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) fail(`no such schedule: ${error.scheduleId}`, 1);
      if (error instanceof ScheduleAlreadyRunning) fail(`a schedule with id ${error.scheduleId} already exists`, 1);
      throw error;
    }
  });
}

export function registerScheduleCommands(schedule: Command): void {
  const create = schedule
    .command('create <id>')
    .description('Create a schedule; each run reads its audience when it starts');
  addPolicyOptions(addTimingOptions(addCampaignOptions(create, { required: true })))
    .option('--paused', 'create it paused')
    .option('--note <text>', 'a note (e.g. why it is paused)')
    .option('--json', 'print the schedule as one JSON document')
    .action(
      async (
        id: string,
        flags: CampaignFlags & TimingFlags & PolicyFlags & JsonFlag & { paused?: boolean; note?: string },
      ) => {
        await withSchedules(async (msgflow) => {
          const timing = timingFrom(flags);
          if (!timing) throw new CliInputError('give a timing: --cron, --calendar, --every or --at');
          const campaign = campaignFieldsFrom(flags);
          if (!campaign.audience)
            throw new CliInputError('give an audience: --file, --url or --loader (or --to for a fixed list)');
          const info = await msgflow.campaignSchedules.create({
            id,
            timing: timing as never,
            campaign: campaign as never,
            policies: policiesFrom(flags) as never,
            paused: flags.paused,
            note: flags.note,
          });
          printResult(flags, info, () => formatInfo(info));
        });
      },
    );

  withJson(schedule.command('list').description('Campaign schedules')).action(async (flags: JsonFlag) => {
    await withSchedules(async (msgflow) => {
      const schedules = await msgflow.campaignSchedules.list();
      printResult(flags, schedules, () => (schedules.length ? schedules.map(formatSummary) : 'no campaign schedules'));
    });
  });

  withJson(
    schedule.command('describe <id>').description('Timing, policies, next and recent runs of a schedule'),
  ).action(async (id: string, flags: JsonFlag) => {
    await withSchedules(async (msgflow) => {
      const info = await msgflow.campaignSchedules.describe(id);
      printResult(flags, info, () => formatInfo(info));
    });
  });

  withJson(
    schedule
      .command('pause <id>')
      .description('Stop starting runs (a running one continues)')
      .option('--note <text>', 'why'),
  ).action(async (id: string, flags: JsonFlag & { note?: string }) => {
    await withSchedules(async (msgflow) => {
      await msgflow.campaignSchedules.pause(id, flags.note);
      printResult(flags, { id, paused: true }, () => `schedule ${id} paused`);
    });
  });

  withJson(schedule.command('unpause <id>').description('Start runs again').option('--note <text>', 'a note')).action(
    async (id: string, flags: JsonFlag & { note?: string }) => {
      await withSchedules(async (msgflow) => {
        await msgflow.campaignSchedules.unpause(id, flags.note);
        printResult(flags, { id, paused: false }, () => `schedule ${id} unpaused`);
      });
    },
  );

  withJson(
    schedule
      .command('trigger <id>')
      .description('Run the campaign now')
      .addOption(new Option('--overlap <policy>', 'overlap policy for this run').choices(OverlapPolicy.options)),
  ).action(async (id: string, flags: JsonFlag & { overlap?: string }) => {
    await withSchedules(async (msgflow) => {
      await msgflow.campaignSchedules.trigger(id, flags.overlap as never);
      printResult(flags, { id, triggered: true }, () => `schedule ${id} triggered`);
    });
  });

  const update = schedule
    .command('update <id>')
    .description('Change timing, campaign or policies (only the flags given)');
  addPolicyOptions(addTimingOptions(addCampaignOptions(update, { required: false })))
    .option('--json', 'print the schedule as one JSON document')
    .action(async (id: string, flags: CampaignFlags & TimingFlags & PolicyFlags & JsonFlag) => {
      await withSchedules(async (msgflow) => {
        const campaign = campaignFieldsFrom(flags);
        const changes = {
          timing: timingFrom(flags),
          campaign: Object.keys(campaign).length ? campaign : undefined,
          policies: policiesFrom(flags),
        };
        if (!changes.timing && !changes.campaign && !changes.policies)
          throw new CliInputError('nothing to update: give timing, campaign or policy flags');
        const info = await msgflow.campaignSchedules.update(id, changes as never);
        printResult(flags, info, () => formatInfo(info));
      });
    });

  withJson(schedule.command('delete <id>').description('Delete a schedule (runs already started continue)')).action(
    async (id: string, flags: JsonFlag) => {
      await withSchedules(async (msgflow) => {
        await msgflow.campaignSchedules.delete(id);
        printResult(flags, { id, deleted: true }, () => `schedule ${id} deleted`);
      });
    },
  );
}
