#!/usr/bin/env node
/** The `msgflow` command: each group of subcommands lives in its own module beside this one (see commands.ts). */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import type * as TracingSetup from '../tracing/setup.js';
import { addCommands } from './commands.js';
import { exitStatusOf } from './exit-status.js';
import { flushTraces } from './flush-traces.js';

// Settings and tracing are loaded when a command runs, not for --help or --version.
let tracing: typeof TracingSetup | undefined;

const program = new Command('msgflow')
  .description(
    'Durable SMS, OTP and voice messaging on Temporal.\n\n' +
      'Temporal is reached the way the temporal CLI reaches it: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, ' +
      'TEMPORAL_API_KEY and TEMPORAL_TLS_* over a temporal.toml profile (TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE).\n\n' +
      'Durations are written 500ms, 30s, 10m, 1h30m or 2d. Commands that print a result take --json: one JSON ' +
      'document on stdout.',
  )
  .version(await versionLine(), '-V, --version', "print the msgflow version and its worker's build id")
  .showHelpAfterError()
  .exitOverride()
  // Every command but `dev` (which writes it) picks up the settings of a running `msgflow dev`. Each traces when
  // OTEL_EXPORTER_OTLP_ENDPOINT is set: `dev`, `worker` and `ingress` start tracing under their own names.
  .hook('preAction', async (_program, command) => {
    const name = topLevelName(command);
    if (name !== 'dev') (await import('../config.js')).loadDevEnv();
    tracing = await import('../tracing/setup.js');
    if (!TRACING_ON_THEIR_OWN.has(name)) tracing.startTracingFromEnv('msgflow-cli');
  });

const TRACING_ON_THEIR_OWN = new Set(['dev', 'worker', 'ingress']);

function topLevelName(command: Command): string {
  let top = command;
  while (top.parent && top.parent !== program) top = top.parent;
  return top.name();
}

/**
 * The version in msgflow's package.json, found from this file as source (src/cli), built for the package
 * (dist/src/cli) and built from a checkout (.build/cli/<hash>/src/cli).
 */
function packageVersion(): string {
  for (const up of ['../..', '../../..', '../../../../..']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(`${up}/package.json`, import.meta.url), 'utf8'));
      if (pkg.name === 'msgflow') return pkg.version;
    } catch {
      // not at this level
    }
  }
  return 'unknown';
}

/**
 * The package version, and for --version the build id a worker of this installation joins its deployment with:
 * MSGFLOW_BUILD_ID, else the workflow code's hash (read only when asked).
 */
async function versionLine(): Promise<string> {
  const args = process.argv.slice(2);
  if (!args.includes('-V') && !args.includes('--version')) return packageVersion();
  try {
    const buildId = process.env.MSGFLOW_BUILD_ID || (await import('../temporal/build-id.js')).workflowBuildId();
    return `${packageVersion()} (build ${buildId})`;
  } catch {
    return `${packageVersion()} (build unknown)`;
  }
}

try {
  await addCommands(program, process.argv.slice(2));
  await program.parseAsync(process.argv);
  await flushTraces(tracing?.activeTracing());
} catch (error) {
  await flushTraces(tracing?.activeTracing());
  if (error instanceof CommanderError) process.exit(exitStatusOf(error));
  if (error instanceof (await import('../config.js')).ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
