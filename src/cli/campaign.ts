/**
 * `msgflow campaign start|watch|status|pause|resume|cancel`: SMS campaigns from a shell, with a live
 * progress bar of per-state counts read from the campaign's `progress` query. The campaign flags are
 * shared with `msgflow schedule` (see schedule.ts).
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { isGrpcDeadlineError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  AudienceFormat,
  CountryCode,
  CsvDelimiter,
  type CampaignProgress,
  type CampaignResult,
  normalizeRecipient,
  Weekday,
} from '../api/campaign-io.js';
import { parseEnv, WorkerEnv } from '../config.js';
import type { CampaignStatus } from '../starter/campaign-status.js';
import { campaignRelationsByKey } from '../starter/campaign-retry.js';
import type { CampaignRun } from '../starter/campaigns.js';
import { Msgflow } from '../starter/index.js';
import { withClient } from './client.js';
import { addCampaignReportCommand, formatRelations } from './reports.js';
import {
  CliInputError,
  describeFailure,
  duration,
  EXIT_CODES,
  failOnRefusal,
  exitCodeOf,
  fail,
  failWorkflow,
  invalidLine,
  type JsonFlag,
  positiveInt,
  printResult,
  withJson,
} from './common.js';

export { CliInputError, fail } from './common.js';

export interface CampaignFlags {
  sender?: string;
  message?: string;
  to?: string;
  file?: string;
  url?: string;
  loader?: string;
  loaderParams?: string;
  format?: string;
  column?: string;
  delimiter?: string;
  defaultCountry?: string;
  chunkSize?: number;
  chunksInFlight?: number;
  window?: string;
  windowTimeZone?: string;
  windowDays?: string;
  timeZoneField?: string;
  defaultTimeZone?: string;
  waitWindow?: number;
  preflight?: boolean;
  maxCost?: number;
  maxOutstanding?: number;
  team?: string;
}

/** `--delimiter`: one character, or `tab`. */
export function delimiter(value: string): string {
  const char = value === 'tab' || value === '\\t' ? '\t' : value;
  const checked = CsvDelimiter.safeParse(char);
  if (!checked.success) throw new InvalidArgumentError(`${checked.error.issues[0]?.message} (or "tab")`);
  return checked.data;
}

/** The campaign flags. `required`: sender, message and an audience must be given (start, schedule create). */
export function addCampaignOptions(command: Command, { required }: { required: boolean }): Command {
  const sender = new Option('--sender <id>', 'approved sender id');
  const message = new Option('--message <text>', 'text to send');
  if (required) {
    sender.makeOptionMandatory();
    message.makeOptionMandatory();
  }
  return command
    .addOption(sender)
    .addOption(message)
    .option(
      '--to <numbers>',
      'recipients, comma-separated, international (+2348012345678) or local with --default-country',
    )
    .option(
      '--file <path>',
      'audience file the worker reads: .csv/.tsv (header row, phone column), .ndjson or .txt (one number a line)',
    )
    .option('--url <url>', 'audience file to download when the campaign runs')
    .option('--loader <name>', 'audience loader registered with the worker (e.g. a database query)')
    .option('--loader-params <json>', 'JSON object handed to the loader')
    .addOption(
      new Option('--format <format>', 'audience format when the name does not tell').choices(AudienceFormat.options),
    )
    .option('--column <name>', 'CSV column (or NDJSON field) holding the number')
    .option(
      '--delimiter <char>',
      'CSV field separator: , ; | or tab (default: detected from the header row)',
      delimiter,
    )
    .option(
      '--default-country <code>',
      'ISO 3166 country (e.g. NG) of numbers written in local form, such as 08012345678',
      (value: string) => value.trim().toUpperCase(),
    )
    .option('--chunk-size <n>', 'recipients per send request (max 1000)', positiveInt('--chunk-size'))
    .option(
      '--chunks-in-flight <n>',
      'send requests in flight at once (default 8, max 16)',
      positiveInt('--chunks-in-flight'),
    )
    .option('--window <HH:MM-HH:MM>', 'send only between these local times (e.g. 09:00-18:00)')
    .option(
      '--window-time-zone <tz>',
      "time zone of --window, e.g. Africa/Lagos, or 'recipient' for each recipient's own local hours",
    )
    .option('--window-days <days>', 'days the window opens, e.g. mon,tue,wed,thu,fri')
    .option(
      '--time-zone-field <name>',
      "with --window-time-zone recipient: the audience field holding each recipient's zone (default timezone, time_zone or tz)",
    )
    .option(
      '--default-time-zone <tz>',
      "with --window-time-zone recipient: the zone of a recipient whose zone is neither given nor told by their number's country",
    )
    .option(
      '--wait-window <duration>',
      'how long each message may take to reach a final state, e.g. 30m or 1h30m (default 6h)',
      duration,
    )
    .option('--no-preflight', 'skip the cost estimate and balance check (personal texts and zones are still checked)')
    .option(
      '--max-cost <minor units>',
      "fail the pre-flight when the estimate is above it (minor units of the account's currency)",
      positiveInt('--max-cost'),
    )
    .option(
      '--max-outstanding <n>',
      'messages awaiting a final state before sending pauses',
      positiveInt('--max-outstanding'),
    )
    .option('--team <name>', "the team it sends for: teams share the token's requests by weight (default: default)");
}

/** The flags copied as they are into the campaign field of the same meaning. */
const FIELD_OF_FLAG = {
  sender: 'sender',
  message: 'message',
  chunkSize: 'chunkSize',
  chunksInFlight: 'chunksInFlight',
  waitWindow: 'waitWindowMs',
  maxCost: 'maxCost',
  maxOutstanding: 'maxOutstanding',
  defaultCountry: 'defaultCountry',
  team: 'team',
} as const satisfies Partial<Record<keyof CampaignFlags, string>>;

/** The campaign fields the flags set (only those given: `schedule update` merges them). */
export function campaignFieldsFrom(flags: CampaignFlags): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [flag, field] of Object.entries(FIELD_OF_FLAG)) {
    const value = flags[flag as keyof typeof FIELD_OF_FLAG];
    if (value !== undefined) fields[field] = value;
  }
  const audience = audienceFrom(flags);
  if (audience) fields.audience = audience;
  if (flags.preflight === false) fields.preflight = false;
  if (flags.window !== undefined) fields.sendWindow = windowFrom(flags);
  else if (
    flags.windowTimeZone !== undefined ||
    flags.windowDays !== undefined ||
    flags.timeZoneField !== undefined ||
    flags.defaultTimeZone !== undefined
  )
    throw new CliInputError(
      '--window-time-zone, --window-days, --time-zone-field and --default-time-zone need --window',
    );
  return fields;
}

function audienceFrom(flags: CampaignFlags): Record<string, unknown> | undefined {
  const given = (['to', 'file', 'url', 'loader'] as const).filter((k) => flags[k] !== undefined);
  if (given.length > 1)
    throw new CliInputError(`give one audience: ${given.map((k) => `--${k}`).join(', ')} were all given`);
  const format = flags.format === undefined ? {} : { format: flags.format };
  const column = flags.column === undefined ? {} : { column: flags.column };
  const csv = { ...format, ...column, ...(flags.delimiter === undefined ? {} : { delimiter: flags.delimiter }) };
  if (flags.to !== undefined) return { type: 'inline', recipients: recipientsFrom(flags.to, flags.defaultCountry) };
  if (flags.file !== undefined) {
    const path = resolve(flags.file);
    if (!existsSync(path)) throw new CliInputError(`--file: no such file: ${path}`);
    if (statSync(path).isDirectory()) throw new CliInputError(`--file: ${path} is a folder, not a file`);
    return { type: 'file', path, ...csv };
  }
  if (flags.url !== undefined) return { type: 'url', url: flags.url, ...csv };
  if (flags.loader !== undefined)
    return { type: 'loader', name: flags.loader, params: loaderParamsFrom(flags.loaderParams) };
  if (flags.loaderParams !== undefined) throw new CliInputError('--loader-params needs --loader');
  return undefined;
}

/** Numbers from `--to`, each checked now: a typo is an error here rather than an "invalid" line in the result. */
function recipientsFrom(list: string, defaultCountry: string | undefined): string[] {
  const country = defaultCountry === undefined ? undefined : CountryCode.safeParse(defaultCountry);
  if (country && !country.success) throw new CliInputError(`--default-country: ${country.error.issues[0]?.message}`);
  const entries = list
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new CliInputError('--to: no recipients given');
  const problems = entries.flatMap((entry, i) => {
    const check = normalizeRecipient(entry, country?.data);
    return check.ok ? [] : [`"${entry}" (recipient ${i + 1}): ${check.reason}`];
  });
  if (problems.length)
    throw new CliInputError(
      `--to: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? ` and ${problems.length - 5} more` : ''}`,
    );
  return entries;
}

function loaderParamsFrom(json: string | undefined): Record<string, unknown> | undefined {
  if (json === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new CliInputError('--loader-params must be a JSON object, e.g. {"segment":"due"}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new CliInputError('--loader-params must be a JSON object');
  return parsed as Record<string, unknown>;
}

function windowFrom(flags: CampaignFlags): Record<string, unknown> {
  const match = /^(\d{2}:\d{2}(?::\d{2})?)-(\d{2}:\d{2}(?::\d{2})?)$/.exec(flags.window ?? '');
  if (!match) throw new CliInputError('--window must look like 09:00-18:00');
  if (!flags.windowTimeZone) throw new CliInputError('--window needs --window-time-zone (e.g. Africa/Lagos)');
  const days = flags.windowDays?.split(',').map((d) => d.trim().toLowerCase().slice(0, 3));
  const badDay = days?.find((d) => !Weekday.safeParse(d).success);
  if (badDay !== undefined) throw new CliInputError(`--window-days: "${badDay}" is not a day (mon, tue, …)`);
  return {
    start: match[1],
    end: match[2],
    timeZone: flags.windowTimeZone,
    ...(days ? { days } : {}),
    ...(flags.timeZoneField !== undefined ? { timeZoneField: flags.timeZoneField } : {}),
    ...(flags.defaultTimeZone !== undefined ? { defaultTimeZone: flags.defaultTimeZone } : {}),
  };
}

/**
 * What a command on a missing campaign says: not found, or, for a signal or update to a campaign that ended
 * (Temporal's "workflow execution already completed"), that it ended.
 */
export function notFoundMessage(error: WorkflowNotFoundError): string {
  return /already completed/i.test(error.message)
    ? `${error.workflowId || 'the campaign'} has already ended: nothing to change (${error.message})`
    : `not found: ${error.message}`;
}

/**
 * Runs `fn` with a Msgflow on the configured Temporal, turning expected failures into clear messages (a start's
 * refusal with failOnRefusal's status: bad input or a key reused with another input is 2).
 */
export async function withMsgflow<T>(fn: (msgflow: Msgflow, client: Client) => Promise<T>): Promise<T> {
  const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, process.env);
  try {
    return await withClient((client) => fn(new Msgflow(client, MSGFLOW_TASK_QUEUE), client));
  } catch (error) {
    if (error instanceof CliInputError) fail(error.message, EXIT_CODES.badInput);
    failOnRefusal(error);
    if (error instanceof WorkflowNotFoundError) fail(notFoundMessage(error), EXIT_CODES.failed);
    if (error instanceof WorkflowUpdateFailedError) fail(error.cause?.message ?? error.message, 1);
    if (isGrpcDeadlineError(error)) {
      fail(
        `no answer in time: the campaign's worker is down or too busy (${error.cause instanceof Error ? error.cause.message : error.message}); try again`,
        1,
      );
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Progress display

const BAR_WIDTH = 24;
const POLL_MS = 1000;

export function formatProgress(p: CampaignProgress | CampaignStatus): string {
  const target = p.audience.total ?? p.audience.valid;
  const settled = p.sent - p.queued + p.suppressed;
  const share = target > 0 ? Math.min(1, settled / target) : p.phase === 'completed' ? 1 : 0;
  const filled = Math.round(share * BAR_WIDTH);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.round(share * 100)).padStart(3)}%`;
  const states = Object.entries(p.counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${state} ${n}`)
    .join(' · ');
  const cost = p.currency ? ` · cost ${p.cost} ${p.currency}` : '';
  const reason = p.paused && p.pausedReason ? ` (${p.pausedReason})` : '';
  const window = p.windowOpensAt ? ` until ${p.windowOpensAt}` : '';
  const suppressed = p.suppressed ? ` · suppressed ${p.suppressed}` : '';
  return `${bar} ${p.phase}${window}${reason} · sent ${p.sent}/${target}${suppressed} · queued ${p.queued}${states ? ` · ${states}` : ''}${cost}`;
}

export function formatResult(workflowId: string, r: CampaignResult): string[] {
  const lines = [
    `${workflowId} ${r.cancelled ? 'cancelled' : 'completed'}: ${r.sent} sent in ${r.chunks} chunk(s), cost ${r.cost}${r.currency ? ` ${r.currency}` : ''}`,
    `  states: ${Object.entries(r.counts)
      .map(([state, n]) => `${state} ${n}`)
      .join(', ')}`,
  ];
  if (r.suppressed) lines.push(`  suppressed (opted out, not sent): ${r.suppressed}`);
  if (r.duplicates) lines.push(`  duplicates skipped: ${r.duplicates}`);
  if (r.invalid.count) {
    lines.push(`  invalid recipients: ${r.invalid.count}`);
    for (const i of r.invalid.recipients.slice(0, 10)) lines.push(`    ${invalidLine(i)}`);
  }
  if (r.notFinal.count)
    lines.push(
      `  no final state: ${r.notFinal.count} (${r.notFinal.ids.slice(0, 10).join(', ')}${r.notFinal.count > 10 ? ', …' : ''})`,
    );
  return lines;
}

/** A campaign's status: its progress line, then why it ended (when it failed) or which steps are being retried. */
export function formatStatus(workflowId: string, s: CampaignStatus): string[] {
  const lines = [formatProgress(s)];
  if (s.failure) lines.push(`${workflowId} ${describeFailure(s.failure)}`);
  for (const r of s.retrying) {
    const why = r.lastFailure ? `: last attempt ${describeFailure(r.lastFailure)}` : '';
    const next = r.nextAttemptAt ? ` (next at ${r.nextAttemptAt})` : '';
    lines.push(`  retrying ${r.activity}, attempt ${r.attempt}${why}${next}`);
  }
  return lines;
}

/** Follows a campaign to its end, redrawing one progress line on a terminal (a line per change otherwise). */
export async function followCampaign(run: CampaignRun, { json }: { json?: boolean } = {}): Promise<CampaignResult> {
  const tty = process.stdout.isTTY && !json;
  let last = '';
  let settled = false;
  const result = run.result().finally(() => (settled = true));
  result.catch(() => undefined);
  while (!settled) {
    try {
      const line = formatStatus(run.workflowId, await run.status())
        .map((part) => part.trim())
        .join(' · ');
      if (line !== last && !json) process.stdout.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
      last = line;
    } catch {
      // A query can miss while a run hands over to the next (continue-as-new): the next poll will answer.
    }
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, POLL_MS))]);
  }
  if (tty) process.stdout.write('\n');
  return result;
}

async function printOutcome(run: CampaignRun, flags: JsonFlag): Promise<void> {
  try {
    const result = await followCampaign(run, flags);
    printResult(flags, { workflowId: run.workflowId, ...result }, () => formatResult(run.workflowId, result));
  } catch (error) {
    failWorkflow(flags, run.workflowId, error);
  }
}

/** A campaign's progress after a command, with its workflow id. */
function printProgress(run: CampaignRun, progress: CampaignProgress, flags: JsonFlag): void {
  printResult(flags, { workflowId: run.workflowId, ...progress }, () => formatProgress(progress));
}

// ---------------------------------------------------------------------------------------------------------
// Commands

export function registerCampaignCommands(campaign: Command): void {
  addCampaignReportCommand(campaign);

  withJson(
    addCampaignOptions(
      campaign.command('start').description('Start a campaign (or find the one already started with --key)'),
      { required: true },
    )
      .option(
        '--key <key>',
        'campaign key: the workflow id is campaign:<key>; the same key never sends twice, and with other flags is refused',
      )
      .option('--wait', 'show live progress until the campaign ends, then its result'),
  ).action(async (flags: CampaignFlags & JsonFlag & { key?: string; wait?: boolean }) => {
    await withMsgflow(async (msgflow) => {
      const fields = campaignFieldsFrom(flags);
      if (!fields.audience) throw new CliInputError('give an audience: --to, --file, --url or --loader');
      const run = await msgflow.startCampaign(fields as Parameters<Msgflow['startCampaign']>[0], { key: flags.key });
      if (flags.wait) {
        if (!flags.json) console.log(`campaign ${run.workflowId}`);
        await printOutcome(run, flags);
      } else printResult(flags, { workflowId: run.workflowId }, () => `campaign ${run.workflowId}`);
    });
  });

  withJson(
    campaign.command('watch <key>').description('Show live progress of a campaign until it ends, then its result'),
  ).action(async (key: string, flags: JsonFlag) => {
    await withMsgflow((msgflow) => printOutcome(msgflow.campaign(key), flags));
  });

  withJson(
    campaign
      .command('status <key>')
      .description(
        "A campaign's progress: phase, per-state counts, cost so far, steps being retried; for one that failed, " +
          'timed out, was cancelled or terminated, why (exit status 3 or 4, or 1)',
      ),
  ).action(async (key: string, flags: JsonFlag) => {
    await withMsgflow(async (msgflow) => {
      const run = msgflow.campaign(key);
      const [status, relations] = await Promise.all([run.status(), campaignRelationsByKey(msgflow.client, run.key)]);
      printResult(flags, { workflowId: run.workflowId, ...status, ...relations }, () => [
        ...formatStatus(run.workflowId, status),
        ...formatRelations(relations),
      ]);
      // A campaign that ended without completing is a failed command, with the exit status of its cause.
      if (status.failure) process.exitCode = exitCodeOf(status.failure);
    });
  });

  withJson(
    campaign
      .command('pause <key>')
      .description('Stop sending further chunks (messages already sent are still tracked)')
      .option('--reason <text>', 'why (shown in the progress)'),
  ).action(async (key: string, flags: JsonFlag & { reason?: string }) => {
    await withMsgflow(async (msgflow) => {
      const run = msgflow.campaign(key);
      printProgress(run, await run.pause(flags.reason), flags);
    });
  });

  withJson(campaign.command('resume <key>').description('Resume sending')).action(
    async (key: string, flags: JsonFlag) => {
      await withMsgflow(async (msgflow) => {
        const run = msgflow.campaign(key);
        printProgress(run, await run.resume(), flags);
      });
    },
  );

  withJson(
    campaign
      .command('cancel <key>')
      .description('Send no further chunk; the campaign still reports the messages already sent'),
  ).action(async (key: string, flags: JsonFlag) => {
    await withMsgflow(async (msgflow) => {
      const run = msgflow.campaign(key);
      printProgress(run, await run.cancel(), flags);
    });
  });
}
