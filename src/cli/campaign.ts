/**
 * `msgflow campaign start|watch|status|pause|resume|cancel`: SMS campaigns from a shell, with a live
 * progress bar of per-state counts read from the campaign's `progress` query. The campaign flags are
 * shared with `msgflow schedule` (see schedule.ts).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import {
  isGrpcDeadlineError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { type Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import {
  AudienceFormat,
  type CampaignProgress,
  type CampaignResult,
  normalizeRecipient,
  Weekday,
} from '../api/campaign-io.js';
import { parseEnv, TemporalEnv, WorkerEnv } from '../config.js';
import type { CampaignRun } from '../starter/campaigns.js';
import { InvalidWorkflowInputError, Msgflow } from '../starter/index.js';
import { connectClient } from '../temporal/connection.js';

/** Bad command-line input: printed as is, exit code 2. */
export class CliInputError extends Error {
  override name = 'CliInputError';
}

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
  chunkSize?: number;
  chunksInFlight?: number;
  window?: string;
  windowTimeZone?: string;
  windowDays?: string;
  waitWindow?: number;
  preflight?: boolean;
  maxOutstanding?: number;
}

const positiveInt = (what: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${what} must be a positive whole number`);
  return n;
};

/** `90s`, `5m`, `1h`, `2d`, `500ms`; a bare number is seconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError(`"${value}" is not a duration such as 90s, 5m, 1h or 2d`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 's']!;
  return Math.round(Number(match[1]) * unit);
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
    .option('--to <numbers>', 'recipients, comma-separated, international (e.g. +2348012345678,2348098765432)')
    .option('--file <path>', 'audience file the worker reads: .csv (phone column), .ndjson or .txt (one number a line)')
    .option('--url <url>', 'audience file to download when the campaign runs')
    .option('--loader <name>', 'audience loader registered with the worker (e.g. a database query)')
    .option('--loader-params <json>', 'JSON object handed to the loader')
    .addOption(
      new Option('--format <format>', 'audience format when the name does not tell').choices(AudienceFormat.options),
    )
    .option('--column <name>', 'CSV column (or NDJSON field) holding the number')
    .option('--chunk-size <n>', 'recipients per send request (max 1000)', positiveInt('--chunk-size'))
    .option(
      '--chunks-in-flight <n>',
      'send requests in flight at once (default 4, max 16)',
      positiveInt('--chunks-in-flight'),
    )
    .option('--window <HH:MM-HH:MM>', 'send only between these local times (e.g. 09:00-18:00)')
    .option('--window-time-zone <tz>', 'time zone of --window, e.g. Africa/Lagos')
    .option('--window-days <days>', 'days the window opens, e.g. mon,tue,wed,thu,fri')
    .option(
      '--wait-window <duration>',
      'how long each message may take to reach a final state (e.g. 30m)',
      parseDuration,
    )
    .option('--no-preflight', 'skip the cost estimate and balance check')
    .option(
      '--max-outstanding <n>',
      'messages awaiting a final state before sending pauses',
      positiveInt('--max-outstanding'),
    );
}

/** The campaign fields the flags set (only those given: `schedule update` merges them). */
export function campaignFieldsFrom(flags: CampaignFlags): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (flags.sender !== undefined) fields.sender = flags.sender;
  if (flags.message !== undefined) fields.message = flags.message;
  const audience = audienceFrom(flags);
  if (audience) fields.audience = audience;
  if (flags.chunkSize !== undefined) fields.chunkSize = flags.chunkSize;
  if (flags.chunksInFlight !== undefined) fields.chunksInFlight = flags.chunksInFlight;
  if (flags.waitWindow !== undefined) fields.waitWindowMs = flags.waitWindow;
  if (flags.preflight === false) fields.preflight = false;
  if (flags.maxOutstanding !== undefined) fields.maxOutstanding = flags.maxOutstanding;
  if (flags.window !== undefined) fields.sendWindow = windowFrom(flags);
  else if (flags.windowTimeZone !== undefined || flags.windowDays !== undefined)
    throw new CliInputError('--window-time-zone and --window-days need --window');
  return fields;
}

function audienceFrom(flags: CampaignFlags): Record<string, unknown> | undefined {
  const given = (['to', 'file', 'url', 'loader'] as const).filter((k) => flags[k] !== undefined);
  if (given.length > 1)
    throw new CliInputError(`give one audience: ${given.map((k) => `--${k}`).join(', ')} were all given`);
  const format = flags.format === undefined ? {} : { format: flags.format };
  const column = flags.column === undefined ? {} : { column: flags.column };
  if (flags.to !== undefined) return { type: 'inline', recipients: recipientsFrom(flags.to) };
  if (flags.file !== undefined) {
    const path = resolve(flags.file);
    if (!existsSync(path)) throw new CliInputError(`--file: no such file: ${path}`);
    return { type: 'file', path, ...format, ...column };
  }
  if (flags.url !== undefined) return { type: 'url', url: flags.url, ...format, ...column };
  if (flags.loader !== undefined)
    return { type: 'loader', name: flags.loader, params: loaderParamsFrom(flags.loaderParams) };
  if (flags.loaderParams !== undefined) throw new CliInputError('--loader-params needs --loader');
  return undefined;
}

/** Numbers from `--to`, each checked now: a typo is an error here rather than an "invalid" line in the result. */
function recipientsFrom(list: string): string[] {
  const entries = list
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new CliInputError('--to: no recipients given');
  const problems = entries.flatMap((entry, i) => {
    const check = normalizeRecipient(entry);
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
  return { start: match[1], end: match[2], timeZone: flags.windowTimeZone, ...(days ? { days } : {}) };
}

/**
 * Ends the command with `message` on stderr and `exitCode` (2: bad input, 1: the operation failed), without
 * the usage text commander would add: the message says what is wrong.
 */
export function fail(message: string, exitCode: 1 | 2): never {
  console.error(exitCode === 2 ? `${message}\n(see --help for the options)` : message);
  throw new CommanderError(exitCode, 'msgflow.failed', message);
}

/** Runs `fn` with a Msgflow on the configured Temporal, turning expected failures into clear messages. */
export async function withMsgflow<T>(fn: (msgflow: Msgflow, client: Client) => Promise<T>): Promise<T> {
  const temporalEnv = parseEnv(TemporalEnv, process.env);
  const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, process.env);
  let client: Client | undefined;
  try {
    client = await connectClient(temporalEnv);
    return await fn(new Msgflow(client, MSGFLOW_TASK_QUEUE), client);
  } catch (error) {
    if (error instanceof CliInputError || error instanceof InvalidWorkflowInputError) fail(error.message, 2);
    if (error instanceof WorkflowNotFoundError) fail(`not found: ${error.message}`, 1);
    if (error instanceof WorkflowUpdateFailedError) fail(error.cause?.message ?? error.message, 1);
    if (isGrpcDeadlineError(error)) {
      fail(
        `no answer in time: the campaign's worker is down or too busy (${error.cause instanceof Error ? error.cause.message : error.message}); try again`,
        1,
      );
    }
    throw error;
  } finally {
    await client?.connection.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Progress display

const BAR_WIDTH = 24;
const POLL_MS = 1000;

export function formatProgress(p: CampaignProgress): string {
  const target = p.audience.total ?? p.audience.valid;
  const settled = p.sent - p.queued;
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
  return `${bar} ${p.phase}${window}${reason} · sent ${p.sent}/${target} · queued ${p.queued}${states ? ` · ${states}` : ''}${cost}`;
}

export function formatResult(workflowId: string, r: CampaignResult): string[] {
  const lines = [
    `${workflowId} ${r.cancelled ? 'cancelled' : 'completed'}: ${r.sent} sent in ${r.chunks} chunk(s), cost ${r.cost}${r.currency ? ` ${r.currency}` : ''}`,
    `  states: ${Object.entries(r.counts)
      .map(([state, n]) => `${state} ${n}`)
      .join(', ')}`,
  ];
  if (r.duplicates) lines.push(`  duplicates skipped: ${r.duplicates}`);
  if (r.invalid.count) {
    lines.push(`  invalid recipients: ${r.invalid.count}`);
    for (const i of r.invalid.recipients.slice(0, 10)) lines.push(`    #${i.index} "${i.value}": ${i.reason}`);
  }
  if (r.notFinal.count)
    lines.push(
      `  no final state: ${r.notFinal.count} (${r.notFinal.ids.slice(0, 10).join(', ')}${r.notFinal.count > 10 ? ', …' : ''})`,
    );
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
      const line = formatProgress(await run.progress());
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

async function printOutcome(run: CampaignRun, json: boolean | undefined): Promise<void> {
  try {
    const result = await followCampaign(run, { json });
    console.log(json ? JSON.stringify(result, null, 2) : formatResult(run.workflowId, result).join('\n'));
  } catch (error) {
    if (error instanceof WorkflowFailedError) {
      fail(`${run.workflowId} failed: ${error.cause?.message ?? error.message}`, 1);
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Commands

export function registerCampaignCommands(program: Command): void {
  const campaign = program.command('campaign').description('SMS campaigns of any size (the smsCampaign workflow)');

  addCampaignOptions(
    campaign.command('start').description('Start a campaign (or find the one already started with --key)'),
    { required: true },
  )
    .option('--key <key>', 'campaign key: the workflow id is campaign:<key>; the same key never sends twice')
    .option('--wait', 'show live progress until the campaign ends, then its result')
    .option('--json', 'print the result as JSON (with --wait)')
    .action(async (flags: CampaignFlags & { key?: string; wait?: boolean; json?: boolean }) => {
      await withMsgflow(async (msgflow) => {
        const fields = campaignFieldsFrom(flags);
        if (!fields.audience) throw new CliInputError('give an audience: --to, --file, --url or --loader');
        const run = await msgflow.startCampaign(fields as Parameters<Msgflow['startCampaign']>[0], { key: flags.key });
        console.log(`campaign ${run.workflowId}`);
        if (flags.wait) await printOutcome(run, flags.json);
      });
    });

  campaign
    .command('watch <key>')
    .description('Show live progress of a campaign until it ends, then its result')
    .option('--json', 'print the result as JSON')
    .action(async (key: string, flags: { json?: boolean }) => {
      await withMsgflow((msgflow) => printOutcome(msgflow.campaign(key), flags.json));
    });

  campaign
    .command('status <key>')
    .description("A campaign's progress: phase, per-state counts, cost so far")
    .option('--json', 'print the progress as JSON')
    .action(async (key: string, flags: { json?: boolean }) => {
      await withMsgflow(async (msgflow) => {
        const progress = await msgflow.campaign(key).progress();
        console.log(flags.json ? JSON.stringify(progress, null, 2) : formatProgress(progress));
      });
    });

  campaign
    .command('pause <key>')
    .description('Stop sending further chunks (messages already sent are still tracked)')
    .option('--reason <text>', 'why (shown in the progress)')
    .action(async (key: string, flags: { reason?: string }) => {
      await withMsgflow(async (msgflow) =>
        console.log(formatProgress(await msgflow.campaign(key).pause(flags.reason))),
      );
    });

  campaign
    .command('resume <key>')
    .description('Resume sending')
    .action(async (key: string) => {
      await withMsgflow(async (msgflow) => console.log(formatProgress(await msgflow.campaign(key).resume())));
    });

  campaign
    .command('cancel <key>')
    .description('Send no further chunk; the campaign still reports the messages already sent')
    .action(async (key: string) => {
      await withMsgflow(async (msgflow) => console.log(formatProgress(await msgflow.campaign(key).cancel())));
    });
}
