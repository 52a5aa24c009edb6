#!/usr/bin/env node
/** The `msgflow` command: each group of subcommands lives in its own module beside this one. */
import { Command, CommanderError } from 'commander';
import { ConfigError, loadDevEnv } from '../config.js';
import { registerSandboxCommands } from './sandbox.js';

loadDevEnv();

const program = new Command('msgflow')
  .description('Durable SMS, OTP and voice messaging on Temporal')
  .showHelpAfterError()
  .exitOverride();

registerSandboxCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
