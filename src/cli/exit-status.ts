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

const BAD_INPUT = 2;

export function exitStatusOf(error: CommanderError): number {
  return error.exitCode !== 0 && USAGE_ERRORS.has(error.code) ? BAD_INPUT : error.exitCode;
}
