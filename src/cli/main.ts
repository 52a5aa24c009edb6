#!/usr/bin/env node
/** The `msgflow` command: each group of subcommands lives in its own module beside this one. */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConfigError, loadDevEnv } from '../config.js';
import { registerCodecCommands } from './codec.js';
import { registerCampaignCommands } from './campaign.js';
import { registerDevCommands } from './dev.js';
import { registerIngressCommands } from './ingress.js';
import { registerOtpCommands } from './otp.js';
import { registerMessageCommands } from './reports.js';
import { registerSandboxCommands } from './sandbox.js';
import { registerScheduleCommands } from './schedule.js';
import { registerSmsCommands } from './sms.js';
import { registerSuppressionCommands } from './suppression.js';
import { registerTemporalCommands } from './temporal.js';
import { registerVoiceCommands } from './voice.js';
import { activeTracing, startTracingFromEnv } from '../tracing/setup.js';
import { registerWorkerCommands } from './worker.js';

const program = new Command('msgflow')
  .description(
    'Durable SMS, OTP and voice messaging on Temporal.\n\n' +
      'Temporal is reached the way the temporal CLI reaches it: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, ' +
      'TEMPORAL_API_KEY and TEMPORAL_TLS_* over a temporal.toml profile (TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE).\n\n' +
      'Durations are written 500ms, 30s, 10m, 1h30m or 2d. Commands that print a result take --json: one JSON ' +
      'document on stdout.',
  )
  .version(packageVersion(), '-V, --version', 'print the msgflow version')
  .showHelpAfterError()
  .exitOverride()
  // Every command but `dev` (which writes it) picks up the settings of a running `msgflow dev`. Each traces when
  // OTEL_EXPORTER_OTLP_ENDPOINT is set: `dev`, `worker` and `ingress` start tracing under their own names.
  .hook('preAction', (_program, command) => {
    const name = topLevelName(command);
    if (name !== 'dev') loadDevEnv();
    if (!TRACING_ON_THEIR_OWN.has(name)) startTracingFromEnv('msgflow-cli');
  });

const TRACING_ON_THEIR_OWN = new Set(['dev', 'worker', 'ingress']);

function topLevelName(command: Command): string {
  let top = command;
  while (top.parent && top.parent !== program) top = top.parent;
  return top.name();
}

/** The version in msgflow's package.json, found from this file both as source (src/cli) and built (dist/src/cli). */
function packageVersion(): string {
  for (const up of ['../..', '../../..']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(`${up}/package.json`, import.meta.url), 'utf8'));
      if (pkg.name === 'msgflow') return pkg.version;
    } catch {
      // not at this level
    }
  }
  return 'unknown';
}

registerDevCommands(program);
registerSmsCommands(program);
registerCampaignCommands(program);
registerMessageCommands(program);
registerScheduleCommands(program);
registerSuppressionCommands(program);
registerWorkerCommands(program);
registerIngressCommands(program);
registerSandboxCommands(program);
registerTemporalCommands(program);
registerCodecCommands(program);
registerOtpCommands(program);
registerVoiceCommands(program);

try {
  await program.parseAsync(process.argv);
  await activeTracing()?.shutdown();
} catch (error) {
  await activeTracing()
    ?.shutdown()
    .catch(() => undefined);
  if (error instanceof CommanderError) process.exit(error.exitCode);
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
