#!/usr/bin/env node
/** The `msgflow` command: each group of subcommands lives in its own module beside this one. */
import { Command, CommanderError } from 'commander';
import { ConfigError, loadDevEnv } from '../config.js';
import { registerCodecCommands } from './codec.js';
import { registerCampaignCommands } from './campaign.js';
import { registerDevCommands } from './dev.js';
import { registerIngressCommands } from './ingress.js';
import { registerOtpCommands } from './otp.js';
import { registerSandboxCommands } from './sandbox.js';
import { registerScheduleCommands } from './schedule.js';
import { registerSmsCommands } from './sms.js';
import { registerTemporalCommands } from './temporal.js';
import { registerVoiceCommands } from './voice.js';
import { registerWorkerCommands } from './worker.js';

const program = new Command('msgflow')
  .description('Durable SMS, OTP and voice messaging on Temporal')
  .showHelpAfterError()
  .exitOverride()
  // Every command but `dev` (which writes it) picks up the settings of a running `msgflow dev`.
  .hook('preAction', (_program, command) => {
    if (command.name() !== 'dev') loadDevEnv();
  });

registerDevCommands(program);
registerSmsCommands(program);
registerCampaignCommands(program);
registerScheduleCommands(program);
registerWorkerCommands(program);
registerIngressCommands(program);
registerSandboxCommands(program);
registerTemporalCommands(program);
registerCodecCommands(program);
registerOtpCommands(program);
registerVoiceCommands(program);

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
