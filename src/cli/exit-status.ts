/**
 * The exit status of a command commander ended: its usage errors (an unknown option or command, an option's
 * value its parser refused, a missing argument) are bad input, 2, as docs/configuration.md's table says;
 * commander itself exits 1 for them. Help, --version and msgflow's own failures keep their status.
 * Kept apart from common.ts so that main.ts loads nothing else before a command runs.
 */
import type { CommanderError } from 'commander';

const USAGE_ERRORS = new Set([
  'commander.unknownOption',
  'commander.unknownCommand',
  'commander.invalidArgument',
  'commander.missingArgument',
  'commander.optionMissingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.conflictingOption',
  'commander.excessArguments',
  'commander.help', // a command group given without its subcommand (help on stderr; 0 when help was asked for)
]);

/**
 * Exit statuses of every command (docs/configuration.md lists them; `otp verify` and `otp send` give 3 and 4
 * their own meaning, see otp.ts): 1 the operation failed, 2 bad input or configuration, 3 refused for a reason
 * no retry fixes (the provider refused, the audience cannot be read, too little balance), 4 timed out,
 * cancelled or terminated before it finished.
 */
export const EXIT_CODES = { failed: 1, badInput: 2, refused: 3, stopped: 4 } as const;
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

export function exitStatusOf(error: CommanderError): number {
  return error.exitCode !== 0 && USAGE_ERRORS.has(error.code) ? EXIT_CODES.badInput : error.exitCode;
}
