/**
 * What every `msgflow` command shares: input errors and how a command fails, option parsers (durations in one
 * syntax), and result printing — human text by default, one JSON document with `--json`.
 */
import { type Command, CommanderError, InvalidArgumentError } from 'commander';
import type { InvalidRecipient } from '../api/campaign-io.js';
import { DurationError, parseDuration } from '../api/duration.js';
import type { FailureReason } from '../api/failure-reason.js';
import { explainFailure, isRefusal } from '../starter/failures.js';
import { KeyReusedError } from '../starter/start-once.js';
import { CampaignStillRunningError, NoKeptInputError } from '../starter/campaign-retry.js';
import type { StartedWorkflow } from '../starter/started-workflow.js';
import { InvalidWorkflowInputError } from '../starter/validate.js';
import { EXIT_CODES, type ExitCode } from './exit-status.js';

export { EXIT_CODES, type ExitCode };

/** Bad command-line input: printed as is, exit code 2. */
export class CliInputError extends Error {
  override name = 'CliInputError';
}

/**
 * Ends the command with `message` on stderr and `exitCode` (see EXIT_CODES), without the usage text commander
 * would add: the message says what is wrong. Bad input points at --help unless `usageHint` is false (when no
 * option is at fault, e.g. a key already used).
 */
export function fail(
  message: string,
  exitCode: ExitCode,
  { usageHint = exitCode === EXIT_CODES.badInput }: { usageHint?: boolean } = {},
): never {
  console.error(usageHint ? `${message}\n(see --help for the options)` : message);
  throw new CommanderError(exitCode, 'msgflow.failed', message);
}

/**
 * The exit status of an error a start refused before anything ran, on every command: input the facade refused,
 * or a key already used with another input, are bad input (2). Undefined for any other error.
 */
export function exitCodeForError(error: unknown): ExitCode | undefined {
  if (error instanceof KeyReusedError || error instanceof InvalidWorkflowInputError) return EXIT_CODES.badInput;
  if (error instanceof CampaignStillRunningError) return EXIT_CODES.refused;
  if (error instanceof NoKeptInputError) return EXIT_CODES.failed;
  return undefined;
}

/**
 * Ends the command for a refusal exitCodeForError knows, with its message and status (no --help hint for a
 * reused key: its message says what to do); returns for any other error.
 */
export function failOnRefusal(error: unknown): void {
  const exitCode = exitCodeForError(error);
  if (exitCode === undefined) return;
  fail((error as Error).message, exitCode, {
    usageHint: exitCode === EXIT_CODES.badInput && !(error instanceof KeyReusedError),
  });
}

/** Awaits a workflow's start; a refusal exitCodeForError knows ends the command with its message and status. */
export async function started<T>(start: Promise<T>): Promise<T> {
  try {
    return await start;
  } catch (error) {
    failOnRefusal(error);
    throw error;
  }
}

/** The exit status a workflow's failure ends a command with. */
export function exitCodeOf(reason: FailureReason): ExitCode {
  if (reason.status !== 'failed') return EXIT_CODES.stopped;
  return isRefusal(reason) ? EXIT_CODES.refused : EXIT_CODES.failed;
}

/** `failed: sender_not_approved — The sender "NOPE" is not approved for this account` (the status first). */
export function describeFailure(reason: FailureReason): string {
  return `${reason.status}: ${reason.kind} — ${reason.message}`;
}

/**
 * Ends the command for a workflow that failed, with its root cause on stderr (and `{workflowId, failure}` on
 * stdout with --json) and the exit status of its kind. Errors that are no workflow's failure are rethrown.
 */
export function failWorkflow(flags: JsonFlag, workflowId: string, error: unknown): never {
  const reason = explainFailure(error);
  if (!reason) throw error;
  if (flags.json) console.log(JSON.stringify({ workflowId, failure: reason }, null, 2));
  fail(`${workflowId} ${describeFailure(reason)}`, exitCodeOf(reason));
}

/** Option parser for a duration (`30s`, `10m`, `1h30m`, `500ms`): milliseconds. */
export function duration(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    if (error instanceof DurationError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

/** Option parser for a duration the target takes in whole seconds (OTP timings). */
export function durationInSeconds(value: string): number {
  const ms = duration(value);
  if (ms % 1000 !== 0) throw new InvalidArgumentError(`"${value}" must be whole seconds, e.g. 30s or 10m`);
  return ms / 1000;
}

export const positiveInt = (what: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${what} must be a positive whole number`);
  return n;
};

export interface JsonFlag {
  json?: boolean;
}

/** Adds `--json`: the command prints its result as one JSON document on stdout, and nothing else there. */
export function withJson(command: Command): Command {
  return command.option('--json', 'print the result as one JSON document (nothing else on stdout)');
}

/** Prints a command's result: `human()` lines by default, `result` as JSON with `--json`. */
export function printResult(flags: JsonFlag, result: unknown, human: () => string | string[]): void {
  if (flags.json) console.log(JSON.stringify(result, null, 2));
  else {
    const text = human();
    console.log(Array.isArray(text) ? text.join('\n') : text);
  }
}

/** A started workflow: its id, and with `--wait` its result too (human text from `human`, or JSON). */
export async function printStarted<R extends object>(
  flags: JsonFlag & { wait?: boolean },
  started: StartedWorkflow<R>,
  human: (result: R) => string | string[],
): Promise<void> {
  const { workflowId } = started;
  if (!flags.wait) return printResult(flags, { workflowId }, () => `workflow ${workflowId}`);
  if (!flags.json) console.log(`workflow ${workflowId}`);
  const result = await started.result().catch((error: unknown) => failWorkflow(flags, workflowId, error));
  printResult(flags, { workflowId, ...result }, () => human(result));
}

/** A refused audience entry as the CLI prints it: its row (1-based, among the audience's entries), masked value and reason. */
export function invalidLine({ index, value, reason }: InvalidRecipient): string {
  return `row ${index + 1} (${value}): ${reason}`;
}
