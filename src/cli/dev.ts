/**
 * `msgflow dev`: the whole stack on embedded defaults — Temporal dev server (UI on 8233, state in .data/),
 * the sandbox, the ingress registered as the sandbox's webhook, and the worker. Writes .data/dev.env so
 * other commands find it, and stops everything in order on Ctrl-C.
 */
import type { AudienceAccess } from '../audience/access.js';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv as parseDotenv } from 'node:util';
import type { Command } from 'commander';
import { startCodecServer } from '../codec-server/server.js';
import {
  CodecEnv,
  DATA_DIR,
  DEV_ENV_FILE,
  DEV_TEMPORAL_PROFILE_FILE,
  EncryptionEnv,
  OtpEnv,
  parseEnv,
  SandboxEnv,
  WorkerEnv,
} from '../config.js';
import { generateKey } from '../crypto/keyring.js';
import { storeOptionsFromEnv } from '../store/index.js';
import { createLogger } from '../log.js';
import { installWorkerRuntime } from '../metrics/worker-runtime.js';
import { otpGuardFromEnv } from '../otp-guard-file.js';
import { startStack } from '../stack.js';
import {
  audienceAccessFromEnv,
  nexusTeamsFromSettings,
  workerChoicesFromEnv,
  workerVersioningFromEnv,
} from '../worker.js';
import { otpKeysFromEnv } from '../crypto/otp-keys.js';
import { EncryptionCodec } from '../temporal/codec.js';
import { keyRingOf } from '../temporal/data-converter.js';
import { configuredAddress } from '../temporal/connection.js';
import { ensureTemporal } from '../temporal/dev-server.js';
import type { NexusTeams } from '../api/nexus-teams.js';
import type { Logger } from '../log.js';
import { DEV_CALLER_NAMESPACE, ensureDevNexus } from './dev-nexus.js';
import { generateCodecToken } from './codec.js';
import { fail } from './common.js';
import type { DevOptions } from './dev-options.js';
import { type DevPort, unavailablePorts, unavailablePortsMessage } from './dev-ports.js';
import { untilStopSignal } from './signals.js';
import { startTracingFromEnv } from '../tracing/setup.js';

/** The stack's keys and tokens: the environment's, else the ones an earlier run kept in dev.env, else new ones. */
function devSecrets(previous: Record<string, string | undefined>) {
  return {
    // Personal data is encrypted in Temporal from the first run; the key and the codec token are kept in
    // dev.env, because .data/temporal.db holds histories only that key can read.
    encryptionKey:
      parseEnv(EncryptionEnv, process.env).MSGFLOW_ENCRYPTION_KEY ?? previous.MSGFLOW_ENCRYPTION_KEY ?? generateKey(),
    // OTP session ids hash the recipient with this key: kept in dev.env so sessions survive restarts.
    otpHashKey:
      parseEnv(OtpEnv, process.env).MSGFLOW_OTP_HASH_KEY ??
      previous.MSGFLOW_OTP_HASH_KEY ??
      randomBytes(32).toString('base64'),
    // Numbers in the message store are found by a keyed hash; the key outlives any encryption key rotation.
    storeLookupKey:
      process.env.MSGFLOW_STORE_LOOKUP_KEY ?? previous.MSGFLOW_STORE_LOOKUP_KEY ?? randomBytes(32).toString('base64'),
    codecTokens: parseEnv(CodecEnv, process.env).MSGFLOW_CODEC_TOKEN ?? [
      previous.MSGFLOW_CODEC_TOKEN ?? generateCodecToken(),
    ],
  };
}

export function registerDevCommands(dev: Command): void {
  dev.action(async (options: DevOptions) => {
    // Readable lines in a terminal; piped or collected, JSON as everywhere else.
    if (process.stderr.isTTY && !process.env.MSGFLOW_LOG_FORMAT) process.env.MSGFLOW_LOG_FORMAT = 'pretty';
    const log = createLogger('dev');
    await checkPorts(options);
    // The worker settings `msgflow worker` reads too (loaders, team weights, cache size): a bad one starts nothing.
    const workerChoices = await workerChoicesFromEnv(process.env);
    // The dev worker's build routes new workflows at once: it is made current on every start (runs pinned to an
    // earlier build wait for that build's worker; `msgflow deployment status` lists them).
    const versioning = workerVersioningFromEnv(process.env, 'always');
    if (options.otlpEndpoint) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = options.otlpEndpoint;
    const tracing = startTracingFromEnv('msgflow-dev');
    mkdirSync(DATA_DIR, { recursive: true });
    const previous = existsSync(DEV_ENV_FILE) ? parseDotenv(readFileSync(DEV_ENV_FILE, 'utf8')) : {};
    const sandboxEnv = parseEnv(SandboxEnv, process.env);
    const workerEnv = parseEnv(WorkerEnv, process.env);
    const { MSGFLOW_TASK_QUEUE } = workerEnv;
    // The dev stack serves the Nexus service unless MSGFLOW_NEXUS=false: the endpoints it makes route to it.
    const nexusTeams = nexusTeamsFromSettings({
      ...workerEnv,
      MSGFLOW_NEXUS: process.env.MSGFLOW_NEXUS === undefined || workerEnv.MSGFLOW_NEXUS,
    });
    const { encryptionKey, otpHashKey, storeLookupKey, codecTokens } = devSecrets(previous);
    const storeEnv = {
      ...process.env,
      MSGFLOW_ENCRYPTION_KEY: encryptionKey,
      MSGFLOW_STORE_LOOKUP_KEY: storeLookupKey,
    };
    // The worker runs in this process: its runtime (logs, Prometheus exporter) comes before any connection.
    await installWorkerRuntime({
      metricsAddress: `127.0.0.1:${Number(options.workerMetricsPort)}`,
      logger: createLogger('worker'),
    });

    const codec = await startCodecServer({
      port: Number(options.codecPort),
      codec: new EncryptionCodec(keyRingOf(encryptionKey)),
      tokens: codecTokens,
      allowedOrigins: [`http://localhost:${options.uiPort}`, `http://127.0.0.1:${options.uiPort}`],
      logger: log,
    });
    console.log('starting Temporal…');
    const temporal = await ensureTemporal(process.env, {
      port: Number(options.temporalPort),
      uiPort: Number(options.uiPort),
      dbFile: `${DATA_DIR}/temporal.db`,
      // The UI sends no custom header to a codec endpoint: its URL carries the token (loopback only).
      codecEndpoint: codec.uiEndpoint,
    }).catch(async (error: unknown) => {
      await codec.close();
      throw error;
    });
    const stack = await startStack({
      temporal,
      taskQueue: MSGFLOW_TASK_QUEUE,
      sandbox: {
        host: '127.0.0.1',
        port: Number(options.sandboxPort),
        db: sandboxEnv.MSGFLOW_SANDBOX_DB,
        adminToken: sandboxEnv.MSGFLOW_SANDBOX_ADMIN_TOKEN ?? previous.MSGFLOW_SANDBOX_ADMIN_TOKEN,
      },
      ingress: { port: Number(options.ingressPort) },
      ...workerChoices,
      versioning,
      ...(nexusTeams ? { nexus: { teams: nexusTeams } } : {}),
      audienceAccess: devAudienceAccess(),
      otpGuard: otpGuardFromEnv(process.env),
      reuseToken: previous.MSGFLOW_API_TOKEN,
      logger: log,
      encryptionKey,
      // A file other processes (a second worker, `msgflow campaign report`) open too.
      store: storeOptionsFromEnv(storeEnv),
      otpKeys: otpKeysFromEnv({
        ...process.env,
        MSGFLOW_ENCRYPTION_KEY: encryptionKey,
        MSGFLOW_OTP_HASH_KEY: otpHashKey,
      }),
    }).catch(async (error: unknown) => {
      await temporal.stop();
      await codec.close();
      throw error;
    });

    const nexus = nexusTeams && (await devNexus(stack.temporal.connection, temporal.namespace, nexusTeams, log));

    // The stack's own Temporal profile: commands reading dev.env use it instead of the user's default profile
    // (whose API key or TLS settings must not be sent to this local server); `temporal` can use it too.
    const temporalProfile = resolve(DEV_TEMPORAL_PROFILE_FILE);
    writeFileSync(
      temporalProfile,
      `[profile.default]\naddress = ${JSON.stringify(temporal.address)}\nnamespace = ${JSON.stringify(temporal.namespace)}\n`,
    );
    const settings = {
      TEMPORAL_CONFIG_FILE: temporalProfile,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      MSGFLOW_TASK_QUEUE,
      ...(versioning ? { MSGFLOW_DEPLOYMENT_NAME: versioning.deploymentName } : {}),
      MSGFLOW_API_BASE_URL: stack.sandbox.baseUrl,
      MSGFLOW_API_TOKEN: stack.token,
      MSGFLOW_SANDBOX_URL: stack.sandbox.url,
      MSGFLOW_SANDBOX_ADMIN_TOKEN: stack.sandbox.adminToken,
      ...(stack.accountId ? { MSGFLOW_SANDBOX_ACCOUNT: stack.accountId } : {}),
      MSGFLOW_WEBHOOK_SECRETS: stack.webhookSecret,
      MSGFLOW_ENCRYPTION_KEY: encryptionKey,
      MSGFLOW_CODEC_URL: codec.url,
      MSGFLOW_CODEC_TOKEN: codecTokens.join(','),
      MSGFLOW_OTP_HASH_KEY: otpHashKey,
      MSGFLOW_STORE_LOOKUP_KEY: storeLookupKey,
      // The other commands' spans (a send from the CLI) join the same traces.
      ...(process.env.OTEL_EXPORTER_OTLP_ENDPOINT
        ? { OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT }
        : {}),
      ...(process.env.MSGFLOW_DATABASE_URL ? { MSGFLOW_DATABASE_URL: process.env.MSGFLOW_DATABASE_URL } : {}),
      ...(process.env.MSGFLOW_OTP_GUARD_RULES
        ? { MSGFLOW_OTP_GUARD_RULES: resolve(process.env.MSGFLOW_OTP_GUARD_RULES) }
        : {}),
    };
    writeFileSync(
      DEV_ENV_FILE,
      `${Object.entries(settings)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n')}\n`,
      { mode: 0o600 },
    );

    console.log(
      [
        '',
        'msgflow dev is running:',
        `  Temporal      ${temporal.address}   (namespace ${temporal.namespace})`,
        `  Temporal UI   ${temporal.uiUrl ?? '(external server)'}`,
        `  Console       ${stack.sandbox.consoleSignInLink()}   (sandbox web console: one-time sign-in link, valid 10 minutes; another: msgflow sandbox console-link)`,
        `  Sandbox API   ${stack.sandbox.baseUrl}   (account ${stack.accountId ?? 'unknown'}, the default of msgflow sandbox … --account)`,
        `  Ingress       ${stack.ingress.webhookUrl}   (metrics ${stack.ingress.url}/metrics)`,
        `  Codec         ${codec.url}   (Temporal UI decrypts payloads through it; CLI: --codec-endpoint ${codec.url} --codec-auth "Bearer $MSGFLOW_CODEC_TOKEN")`,
        `  Worker        ${versioning ? `deployment ${versioning.deploymentName}, build ${versioning.buildId} (current; msgflow deployment status)` : 'unversioned (MSGFLOW_WORKER_VERSIONING=false)'}   (metrics http://127.0.0.1:${Number(options.workerMetricsPort)}/metrics)`,
        `  Nexus         ${nexus ?? 'off (MSGFLOW_NEXUS=false)'}`,
        `  Traces        ${tracing ? tracing.endpoint : 'off (--otlp-endpoint http://127.0.0.1:4318 sends them to a collector)'}`,
        `  Settings      ${DEV_ENV_FILE} (read by the other msgflow commands); Temporal profile ${DEV_TEMPORAL_PROFILE_FILE}`,
        '',
        'Try: npm run msgflow -- sms send --to 2348012345678 --sender ACME --message "hi" --wait',
        'Ctrl-C stops everything.',
      ].join('\n'),
    );

    await Promise.race([untilStopSignal(), stack.workerRun]);
    console.log('stopping…');
    await stack.close();
    await temporal.stop();
    await codec.close();
  });
}

/**
 * The callers' namespace and each team's endpoint, made or kept, as the start-up output says them; a server
 * that refuses (e.g. one the environment names, without the operator's rights) leaves Nexus unset, said why.
 */
async function devNexus(
  connection: Parameters<typeof ensureDevNexus>[0],
  namespace: string,
  teams: NexusTeams,
  log: Logger,
): Promise<string> {
  try {
    const endpoints = await ensureDevNexus(connection, namespace, teams);
    const routes = endpoints.map((e) => `endpoint ${e.name} → queue ${e.taskQueue} (team ${e.team})`).join(', ');
    return `${routes}; call from namespace ${DEV_CALLER_NAMESPACE}   (docs/nexus.md)`;
  } catch (error) {
    log.warn('Nexus endpoints not set up', { error });
    return `served, but its endpoints could not be made: ${(error as Error).message}`;
  }
}

/** Every port this command binds, free before anything starts (Temporal's only when it starts the server). */
async function checkPorts(options: DevOptions): Promise<void> {
  const ports: DevPort[] = [
    ...(configuredAddress(process.env)
      ? []
      : [
          { what: 'Temporal', flag: '--temporal-port', port: portOption(options.temporalPort, '--temporal-port') },
          { what: 'Temporal UI', flag: '--ui-port', port: portOption(options.uiPort, '--ui-port') },
        ]),
    { what: 'sandbox', flag: '--sandbox-port', port: portOption(options.sandboxPort, '--sandbox-port') },
    { what: 'ingress', flag: '--ingress-port', port: portOption(options.ingressPort, '--ingress-port') },
    { what: 'codec endpoint', flag: '--codec-port', port: portOption(options.codecPort, '--codec-port') },
    {
      what: 'worker metrics',
      flag: '--worker-metrics-port',
      port: portOption(options.workerMetricsPort, '--worker-metrics-port'),
    },
  ];
  const unavailable = await unavailablePorts(ports);
  if (unavailable.length > 0) fail(unavailablePortsMessage(unavailable), 1);
}

function portOption(value: string, flag: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    fail(`${flag} must be a port number (0-65535), not "${value}"`, 2);
  return port;
}

/**
 * The dev stack's worker reads audience files from the folder it was started in, as well as from
 * `.data/audiences` (unless MSGFLOW_AUDIENCE_DIRS says otherwise): `--file customers.csv` works there.
 */
function devAudienceAccess(): AudienceAccess {
  const access = audienceAccessFromEnv(process.env);
  return process.env.MSGFLOW_AUDIENCE_DIRS ? access : { ...access, folders: [...access.folders, process.cwd()] };
}
