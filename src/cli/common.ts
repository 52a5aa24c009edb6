/**
 * What every `msgflow` command shares: input errors and how a command fails, option parsers (durations in one
 * syntax), and result printing — human text by default, one JSON document with `--json`.
 */
import { type Command, CommanderError, InvalidArgumentError } from 'commander';
import type { InvalidRecipient } from '../api/campaign-io.js';
import { DurationError, parseDuration } from '../api/duration.js';
import type { StartedWorkflow } from '../starter/started-workflow.js';

/** Bad command-line input: printed as is, exit code 2. */
export class CliInputError extends Error {
  override name = 'CliInputError';
}

/**
 * Ends the command with `message` on stderr and `exitCode` (2: bad input, 1: the operation failed), without
 * the usage text commander would add: the message says what is wrong.
 */
export function fail(message: string, exitCode: 1 | 2): never {
  console.error(exitCode === 2 ? `${message}\n(see --help for the options)` : message);
  throw new CommanderError(exitCode, 'msgflow.failed', message);
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
  const result = await started.result();
  printResult(flags, { workflowId, ...result }, () => human(result));
}

/** A refused audience entry as the CLI prints it: its row (1-based, among the audience's entries), masked value and reason. */
export function invalidLine({ index, value, reason }: InvalidRecipient): string {
  return `row ${index + 1} (${value}): ${reason}`;
}
