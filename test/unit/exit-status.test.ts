/** Usage errors commander raises end a command with exit status 2 (bad input), as the documented table says. */
import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { duration } from '../../src/cli/common.js';
import { exitStatusOf } from '../../src/cli/exit-status.js';

/** A program set up as main.ts sets up msgflow's, with one command of the usual option kinds. */
function program(): Command {
  const quiet = { writeOut: () => undefined, writeErr: () => undefined };
  const root = new Command('msgflow').version('1.0.0', '-V, --version').exitOverride().configureOutput(quiet);
  const sms = root.command('sms').configureOutput(quiet);
  sms
    .command('send')
    .requiredOption('--to <numbers>', 'recipients')
    .option('--wait-window <duration>', 'a duration', duration)
    .configureOutput(quiet)
    .action(() => undefined);
  return root;
}

async function statusOf(...args: string[]): Promise<number> {
  const error = await program()
    .parseAsync(['node', 'msgflow', ...args])
    .then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
  expect(error).toBeInstanceOf(CommanderError);
  return exitStatusOf(error as CommanderError);
}

describe('exitStatusOf', () => {
  it.each([
    ['an unknown option', ['sms', 'send', '--to', '1', '--tick-ms', '100']],
    ['an option value its parser refuses', ['sms', 'send', '--to', '1', '--wait-window', '30']],
    ['a missing required option', ['sms', 'send']],
    ['an option without its value', ['sms', 'send', '--to']],
    ['an unknown command', ['sms', 'sned']],
    ['a group without its command', ['sms']],
  ])('is 2 for %s', async (_what, args) => {
    expect(await statusOf(...args)).toBe(2);
  });

  it('is 0 for --help and --version', async () => {
    expect(await statusOf('sms', 'send', '--help')).toBe(0);
    expect(await statusOf('--version')).toBe(0);
  });

  it("keeps the status of msgflow's own failures", () => {
    expect(exitStatusOf(new CommanderError(3, 'msgflow.failed', 'refused'))).toBe(3);
    expect(exitStatusOf(new CommanderError(1, 'msgflow.failed', 'failed'))).toBe(1);
  });
});
