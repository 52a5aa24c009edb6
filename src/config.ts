/**
 * Environment configuration, validated with zod. Every process (sandbox, worker, ingress, CLI) reads its
 * settings here and nowhere else, so a variable's name, default and rule live in one place.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { durationText } from './api/duration.js';
import { detailsOf } from './api/errors.js';
import { NexusTeamsText } from './api/nexus-teams.js';
import { TeamWeightsText } from './api/team-weights.js';
import { DEFAULT_DEPLOYMENT_NAME, MAKE_CURRENT_MODES } from './definitions/versioning.js';

/** Where `msgflow dev` keeps its state and writes the connection settings other commands read. */
export const DATA_DIR = '.data';
export const DEV_ENV_FILE = `${DATA_DIR}/dev.env`;
/** The running stack's Temporal profile (temporal.toml), named by TEMPORAL_CONFIG_FILE in dev.env. */
export const DEV_TEMPORAL_PROFILE_FILE = `${DATA_DIR}/temporal.toml`;
/** The one folder a worker reads file audiences from unless MSGFLOW_AUDIENCE_DIRS names others. */
export const DEFAULT_AUDIENCE_DIR = `${DATA_DIR}/audiences`;

const port = z.coerce.number().int().min(0).max(65535);
const list = z.string().transform((s) => s.split(/[\s,]+/).filter(Boolean));
const flag = z
  .enum(['true', 'false'], { error: 'expected true or false' })
  .default('false')
  .transform((s) => s === 'true');

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses `env` with `schema`, turning failures into one readable ConfigError naming each variable. */
export function parseEnv<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv = process.env): z.infer<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = detailsOf(result.error).map((d) => `  ${d.path}: ${d.message}`);
  throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
}

/** A variable that is no longer read: setting it is an error naming its replacement, so it is not silently ignored. */
const renamed = (replacement: string) => z.undefined({ error: `is no longer read: use ${replacement}` }).optional();

/** Loads `.data/dev.env` (written by `msgflow dev`) without overriding variables already set. */
export function loadDevEnv(file = DEV_ENV_FILE): boolean {
  if (!existsSync(file)) return false;
  process.loadEnvFile(file);
  return true;
}

/**
 * The msgflow side of the Temporal settings. The connection itself (address, namespace, API key, TLS) is read
 * the way every Temporal tool reads it, by @temporalio/envconfig: the `TEMPORAL_*` variables over a profile of
 * `temporal.toml` (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE); see src/temporal/connection.ts.
 */
export const TemporalEnv = z.object({
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).optional(),
  /** Profile of the config file to use (default `default`), and the file (default ~/.config/temporalio/temporal.toml). */
  TEMPORAL_PROFILE: z.string().min(1).optional(),
  TEMPORAL_CONFIG_FILE: z.string().min(1).optional(),
  /** Temporal Cloud API key; implies TLS. */
  TEMPORAL_API_KEY: z.string().optional(),
  /** `true` turns TLS on without client certificates, `false` off. */
  TEMPORAL_TLS: z.enum(['true', 'false', '1', '0']).optional(),
  /** mTLS client certificate and key, and the CA of a server certificate not publicly trusted: PEM paths or data. */
  TEMPORAL_TLS_CLIENT_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_CLIENT_CERT_DATA: z.string().optional(),
  TEMPORAL_TLS_CLIENT_KEY_PATH: z.string().optional(),
  TEMPORAL_TLS_CLIENT_KEY_DATA: z.string().optional(),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: z.string().optional(),
  /** Server name to verify in the server certificate when it differs from the address's host. */
  TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  // msgflow's former names of Temporal's own TLS variables.
  TEMPORAL_TLS_CERT: renamed('TEMPORAL_TLS_CLIENT_CERT_PATH'),
  TEMPORAL_TLS_KEY: renamed('TEMPORAL_TLS_CLIENT_KEY_PATH'),
  TEMPORAL_TLS_CA: renamed('TEMPORAL_TLS_SERVER_CA_CERT_PATH'),
  TEMPORAL_CLI_PATH: z.string().optional(),
  /** Where a Temporal CLI built or downloaded by msgflow is cached (default `${XDG_CACHE_HOME:-~/.cache}/msgflow`). */
  MSGFLOW_CACHE_DIR: z.string().min(1).optional(),
});
export type TemporalEnv = z.infer<typeof TemporalEnv>;

export const WorkerEnv = z.object({
  /** The workflows' task queue; provider calls run on `${MSGFLOW_TASK_QUEUE}-provider`. */
  MSGFLOW_TASK_QUEUE: z.string().min(1).default('msgflow'),
  /** A module exporting `audienceLoaders` (name -> AudienceLoader) for campaigns whose audience is a loader. */
  MSGFLOW_AUDIENCE_LOADERS: z.string().min(1).optional(),
  /** Workflow runs the worker keeps in memory (default 1,000, DEFAULT_MAX_CACHED_WORKFLOWS in src/worker.ts). */
  MSGFLOW_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(2).optional(),
  /** Folders file audiences may be read from (subfolders included), comma-separated. */
  MSGFLOW_AUDIENCE_DIRS: list.default([DEFAULT_AUDIENCE_DIR]),
  /** Hosts URL audiences may be downloaded from: names, `*.example.com`, or `*` for any; none by default. */
  MSGFLOW_AUDIENCE_URL_HOSTS: list.default([]),
  /** `true`: URL audiences may use plain http as well as https. */
  MSGFLOW_AUDIENCE_URL_ALLOW_HTTP: flag,
  /** `true`: allowed hosts may resolve to loopback, private or link-local addresses. */
  MSGFLOW_AUDIENCE_URL_ALLOW_INTERNAL: flag,
  /** `false`: the worker polls unversioned, as before worker deployments (docs/versioning.md says what that costs). */
  MSGFLOW_WORKER_VERSIONING: z
    .enum(['true', 'false'], { error: 'expected true or false' })
    .default('true')
    .transform((s) => s === 'true'),
  /** The Temporal Worker Deployment the worker joins. */
  MSGFLOW_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'expected letters, digits, - and _ (no . or :)')
    .max(200)
    .default(DEFAULT_DEPLOYMENT_NAME),
  /** The worker's build id (default: a hash of the workflow code, `msgflow --version` prints it). */
  MSGFLOW_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected letters, digits, ., - and _ (no :)')
    .max(200)
    .optional(),
  /** When the worker makes its build the deployment's current version: `if-none` (first install), `always`, `never`. */
  MSGFLOW_DEPLOYMENT_MAKE_CURRENT: z.enum(MAKE_CURRENT_MODES).default('if-none'),
  /** `true`: the worker also serves the `msgflow` Nexus service on its queue (needs the OTP keys, docs/nexus.md). */
  MSGFLOW_NEXUS: flag,
  /**
   * The teams the Nexus service serves, each on a task queue of its own that its endpoint targets
   * (src/api/nexus-teams.ts): `clinic,marketing`. Default: the default team, on the workflows' queue.
   */
  MSGFLOW_NEXUS_TEAMS: NexusTeamsText.optional(),
});
export type WorkerEnv = z.infer<typeof WorkerEnv>;

/** The OTP fraud guard's rules file (YAML or JSON); without one, the default rules apply. */
export const OtpGuardEnv = z.object({
  MSGFLOW_OTP_GUARD_RULES: z.string().min(1).optional(),
});
export type OtpGuardEnv = z.infer<typeof OtpGuardEnv>;

export const ProviderEnv = z.object({
  MSGFLOW_API_BASE_URL: z.url().default('http://127.0.0.1:4010/v1'),
  MSGFLOW_API_TOKEN: z.string().min(1).optional(),
  /** The token's request limit; the provider task queue is throttled to it across all workers. */
  MSGFLOW_RATE_LIMIT_PER_MINUTE: z.coerce.number().positive().default(120),
});
export type ProviderEnv = z.infer<typeof ProviderEnv>;

/**
 * Teams' weights in the token's bulk requests (src/api/team-weights.ts): `clinic:3,marketing:1`, or a file of
 * such entries that every worker re-reads when it changes. A team not named weighs 1.
 */
export const TeamWeightsEnv = z.object({
  MSGFLOW_TEAM_WEIGHTS: TeamWeightsText.optional(),
  MSGFLOW_TEAM_WEIGHTS_FILE: z.string().min(1).optional(),
});
export type TeamWeightsEnv = z.infer<typeof TeamWeightsEnv>;
const oneSourceOfWeights = (env: TeamWeightsEnv) => !(env.MSGFLOW_TEAM_WEIGHTS && env.MSGFLOW_TEAM_WEIGHTS_FILE);
const twoSourcesOfWeights = {
  message: 'set MSGFLOW_TEAM_WEIGHTS or MSGFLOW_TEAM_WEIGHTS_FILE, not both',
  path: ['MSGFLOW_TEAM_WEIGHTS_FILE'],
};
/** The team weights alone (`msgflow dev`'s worker), with the same rule as a worker's settings. */
export const TeamWeightsSettings = TeamWeightsEnv.refine(oneSourceOfWeights, twoSourcesOfWeights);

export const IngressEnv = z.object({
  MSGFLOW_INGRESS_HOST: z.string().default('127.0.0.1'),
  MSGFLOW_INGRESS_PORT: port.default(4020),
  /** Accepted webhook signing secrets (whsec_…), comma-separated: the current and, while rotating, the previous. */
  MSGFLOW_WEBHOOK_SECRETS: list.optional(),
  /** The relay tells one workflow at most this many times a second (a campaign's outcomes gather meanwhile). */
  MSGFLOW_RELAY_SIGNALS_PER_SECOND: z.coerce.number().positive().max(1000).default(2),
  /** How long a relay's claim on a workflow holds if its process dies while telling: the bound on a takeover. */
  MSGFLOW_RELAY_LEASE_SECONDS: z.coerce.number().positive().max(3600).default(15),
});
export type IngressEnv = z.infer<typeof IngressEnv>;

const base64Key = z
  .string()
  .refine(
    (s) => /^[A-Za-z0-9+/]+=*$/.test(s) && Buffer.from(s, 'base64').length >= 32,
    'must be base64 of at least 32 bytes',
  );

/**
 * OTP sessions (the facade, the CLI and the worker). The workflow id of a session is derived from the
 * purpose and an HMAC-SHA256 of the recipient under MSGFLOW_OTP_HASH_KEY, so no number appears in it;
 * changing the key orphans running sessions (new sends start new ones). Codes travel sealed with
 * MSGFLOW_OTP_SEAL_KEY (a key ring in MSGFLOW_ENCRYPTION_KEY's format), or MSGFLOW_ENCRYPTION_KEY when unset.
 */
export const OtpEnv = z.object({
  MSGFLOW_OTP_HASH_KEY: base64Key.optional(),
  MSGFLOW_OTP_SEAL_KEY: z.string().min(1).optional(),
});
export type OtpEnv = z.infer<typeof OtpEnv>;

const DAY_MS = 24 * 60 * 60 * 1000;
const upToADay = durationText({ max: DAY_MS });

/** Express `trust proxy`: true/false, a hop count, or addresses/subnets/names such as `loopback,10.0.0.0/8`. */
const trustProxy = z
  .string()
  .trim()
  .min(1)
  .transform((s): boolean | number | string =>
    s === 'true' ? true : s === 'false' ? false : /^\d+$/.test(s) ? Number(s) : s,
  );

/** `sms_segment=3,otp=5`: prices in minor units, by the names of GET /pricing. */
const priceList = z
  .string()
  .transform((s) => Object.fromEntries(list.parse(s).map((pair) => [pair.split('=')[0], Number(pair.split('=')[1])])))
  .pipe(
    z.strictObject({
      sms_segment: z.number().int().nonnegative().optional(),
      otp: z.number().int().nonnegative().optional(),
      voice_call: z.number().int().nonnegative().optional(),
      lookup: z.number().int().nonnegative().optional(),
      email_verification: z.number().int().nonnegative().optional(),
    }),
  );

/**
 * The sandbox (`msgflow sandbox`; each variable is also a flag). Unset timing and limit variables take the
 * sandbox's own defaults (src/sandbox/options.ts).
 */
export const SandboxEnv = z.object({
  MSGFLOW_SANDBOX_HOST: z.string().default('127.0.0.1'),
  MSGFLOW_SANDBOX_PORT: port.default(4010),
  MSGFLOW_SANDBOX_DB: z.string().default(`${DATA_DIR}/sandbox.db`),
  MSGFLOW_SANDBOX_ADMIN_TOKEN: z.string().min(16).optional(),
  /** The account `msgflow sandbox …` helpers use without `--account` (msgflow dev writes its own). */
  MSGFLOW_SANDBOX_ACCOUNT: z.string().min(1).optional(),
  MSGFLOW_SANDBOX_TRUST_PROXY: trustProxy.optional(),
  /** How often the carrier and the webhook dispatcher look for due work (a duration, like every timing below). */
  MSGFLOW_SANDBOX_TICK: durationText({ min: 1, max: 60_000 }).optional(),
  /** Processing time of a charged send (its Idempotency-Key is held meanwhile). */
  MSGFLOW_SANDBOX_SEND_LATENCY: upToADay.optional(),
  /** Carrier: queued → sent, sent → final state, and each step of a voice call. */
  MSGFLOW_SANDBOX_CARRIER_SUBMIT: upToADay.optional(),
  MSGFLOW_SANDBOX_CARRIER_FINAL: upToADay.optional(),
  MSGFLOW_SANDBOX_VOICE_STEP: upToADay.optional(),
  /** Webhook retry delays, comma-separated, e.g. `1s,5s,30s`; an empty list never retries. */
  MSGFLOW_SANDBOX_WEBHOOK_RETRY: z
    .string()
    .transform((s) => list.parse(s))
    .pipe(z.array(durationText({ max: 7 * DAY_MS })))
    .optional(),
  MSGFLOW_SANDBOX_WEBHOOK_TIMEOUT: durationText({ min: 1, max: 120_000 }).optional(),
  MSGFLOW_SANDBOX_WEBHOOK_BATCH_MAX: z.coerce.number().int().min(1).max(1000).optional(),
  /** Chaos: probability (0..1) of sending a delivered webhook once more, and a random hold-back of first attempts. */
  MSGFLOW_SANDBOX_WEBHOOK_DUPLICATE: z.coerce.number().min(0).max(1).optional(),
  MSGFLOW_SANDBOX_WEBHOOK_MAX_DELAY: upToADay.optional(),
  /** Requests per minute per token (accounts without their own limit). */
  MSGFLOW_SANDBOX_RATE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).optional(),
  /** POST /otp/send per minute per source IP. */
  MSGFLOW_SANDBOX_OTP_IP_LIMIT: z.coerce.number().int().min(1).max(1_000_000).optional(),
  MSGFLOW_SANDBOX_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(10 * 1024 * 1024)
    .optional(),
  MSGFLOW_SANDBOX_PRICES: priceList.optional(),
  // Timings were plain milliseconds under these names; they are durations now.
  MSGFLOW_SANDBOX_TICK_MS: renamed('MSGFLOW_SANDBOX_TICK (a duration, e.g. 100ms)'),
  MSGFLOW_SANDBOX_SEND_LATENCY_MS: renamed('MSGFLOW_SANDBOX_SEND_LATENCY (a duration, e.g. 10ms)'),
  MSGFLOW_SANDBOX_CARRIER_SUBMIT_MS: renamed('MSGFLOW_SANDBOX_CARRIER_SUBMIT (a duration, e.g. 500ms)'),
  MSGFLOW_SANDBOX_CARRIER_FINAL_MS: renamed('MSGFLOW_SANDBOX_CARRIER_FINAL (a duration, e.g. 2s)'),
  MSGFLOW_SANDBOX_VOICE_STEP_MS: renamed('MSGFLOW_SANDBOX_VOICE_STEP (a duration, e.g. 1s)'),
  MSGFLOW_SANDBOX_WEBHOOK_RETRY_MS: renamed('MSGFLOW_SANDBOX_WEBHOOK_RETRY (durations, e.g. 5s,30s,2m)'),
  MSGFLOW_SANDBOX_WEBHOOK_TIMEOUT_MS: renamed('MSGFLOW_SANDBOX_WEBHOOK_TIMEOUT (a duration, e.g. 10s)'),
  MSGFLOW_SANDBOX_WEBHOOK_MAX_DELAY_MS: renamed('MSGFLOW_SANDBOX_WEBHOOK_MAX_DELAY (a duration, e.g. 1s)'),
  /** Where the `msgflow sandbox account|token|sender|credit|inbox|ledger` helpers find a running sandbox. */
  MSGFLOW_SANDBOX_URL: z.url().default('http://127.0.0.1:4010'),
});
export type SandboxEnv = z.infer<typeof SandboxEnv>;

export const EncryptionEnv = z.object({
  /** base64 AES-256 key, or `id:key` pairs comma-separated (the first encrypts, all decrypt) for rotation. */
  MSGFLOW_ENCRYPTION_KEY: z.string().min(1).optional(),
});
export type EncryptionEnv = z.infer<typeof EncryptionEnv>;

/**
 * The codec endpoint (`msgflow codec serve`, started by `msgflow dev`): decrypts payloads for the Temporal
 * UI and CLI, for callers holding one of its bearer tokens. Needs MSGFLOW_ENCRYPTION_KEY.
 */
export const CodecEnv = z.object({
  MSGFLOW_CODEC_HOST: z.string().default('127.0.0.1'),
  MSGFLOW_CODEC_PORT: port.default(4030),
  /** Accepted bearer tokens, comma-separated (the current and, while rotating, the previous); 16+ characters. */
  MSGFLOW_CODEC_TOKEN: list
    .pipe(z.array(z.string().min(16, 'each token needs at least 16 characters')).min(1))
    .optional(),
  /** Browser origins allowed to call it: the Temporal UI's. */
  MSGFLOW_CODEC_CORS_ORIGINS: list.default(['http://localhost:8233', 'http://127.0.0.1:8233']),
});
export type CodecEnv = z.infer<typeof CodecEnv>;

/** Where the worker's Prometheus exporter listens (`host:port`; the SDK's series and msgflow's); off when unset. */
export const MetricsEnv = z.object({
  MSGFLOW_WORKER_METRICS_ADDRESS: z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[\w.-]+):\d{1,5}$/, 'expected host:port, e.g. 0.0.0.0:9464')
    .optional(),
});
export type MetricsEnv = z.infer<typeof MetricsEnv>;

/**
 * Traces, configured by OpenTelemetry's standard variables: exported over OTLP/HTTP (JSON) when an endpoint is
 * set, off otherwise. Other OTEL_EXPORTER_OTLP_* variables (headers, timeout) are read by the exporter itself.
 */
export const TracingEnv = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'expected an http(s) URL such as http://localhost:4318' })
    .optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'expected an http(s) URL such as http://localhost:4318/v1/traces' })
    .optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.literal('http/json', 'msgflow exports traces as http/json').optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.literal('http/json', 'msgflow exports traces as http/json').optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], 'expected otlp or none').optional(),
  OTEL_SDK_DISABLED: flag,
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
});
export type TracingEnv = z.infer<typeof TracingEnv>;

/**
 * The message store (src/store): SQLite at MSGFLOW_STORE_FILE unless MSGFLOW_DATABASE_URL names a
 * PostgreSQL database. With MSGFLOW_ENCRYPTION_KEY, recipient numbers are stored encrypted, and
 * MSGFLOW_STORE_LOOKUP_KEY (its own key, kept when the encryption key rotates) keys their lookup hashes.
 */
const storeFields = {
  MSGFLOW_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//i, 'expected a postgres:// or postgresql:// URL')
    .optional(),
  MSGFLOW_STORE_FILE: z.string().min(1).default(`${DATA_DIR}/msgflow.db`),
  MSGFLOW_ENCRYPTION_KEY: z.string().min(1).optional(),
  MSGFLOW_STORE_LOOKUP_KEY: base64Key.optional(),
  /** How long a message's row is kept after its last activity (never while a workflow still waits for it). */
  MSGFLOW_STORE_RETENTION: durationText({ min: 60 * 60 * 1000 }).default(30 * DAY_MS),
};
/** With MSGFLOW_ENCRYPTION_KEY set, the store seals numbers and needs a lookup key to find them. */
const hasLookupKeyWhenEncrypted = (env: { MSGFLOW_ENCRYPTION_KEY?: string; MSGFLOW_STORE_LOOKUP_KEY?: string }) =>
  !env.MSGFLOW_ENCRYPTION_KEY || !!env.MSGFLOW_STORE_LOOKUP_KEY;
const missingLookupKey = {
  message: 'with MSGFLOW_ENCRYPTION_KEY set, the store also needs MSGFLOW_STORE_LOOKUP_KEY (base64 of 32 random bytes)',
  path: ['MSGFLOW_STORE_LOOKUP_KEY'],
};
export const StoreEnv = z.object(storeFields).refine(hasLookupKeyWhenEncrypted, missingLookupKey);
export type StoreEnv = z.infer<typeof StoreEnv>;

/**
 * Everything a worker process reads (`msgflow worker`), parsed once at start and passed down: one ConfigError
 * lists every wrong variable (its own, the Temporal connection's and the traces' alike), and no part of the
 * wiring parses the environment again. A variable a worker comes to read is added here, through its part.
 */
export const WorkerSettings = z
  .object({
    ...TemporalEnv.shape,
    ...TracingEnv.shape,
    ...WorkerEnv.shape,
    ...ProviderEnv.shape,
    ...TeamWeightsEnv.shape,
    ...OtpGuardEnv.shape,
    ...OtpEnv.shape,
    ...EncryptionEnv.shape,
    ...MetricsEnv.shape,
    ...storeFields,
  })
  .refine(hasLookupKeyWhenEncrypted, missingLookupKey)
  .refine(oneSourceOfWeights, twoSourcesOfWeights);
export type WorkerSettings = z.infer<typeof WorkerSettings>;
