/**
 * Environment configuration, validated with zod. Every process (sandbox, worker, ingress, CLI) reads its
 * settings here and nowhere else, so a variable's name, default and rule live in one place.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { detailsOf } from './api/errors.js';

/** Where `msgflow dev` keeps its state and writes the connection settings other commands read. */
export const DATA_DIR = '.data';
export const DEV_ENV_FILE = `${DATA_DIR}/dev.env`;

const port = z.coerce.number().int().min(0).max(65535);
const list = z
  .string()
  .transform((s) => s.split(/[\s,]+/).filter(Boolean));

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

/** Loads `.data/dev.env` (written by `msgflow dev`) without overriding variables already set. */
export function loadDevEnv(file = DEV_ENV_FILE): boolean {
  if (!existsSync(file)) return false;
  process.loadEnvFile(file);
  return true;
}

export const TemporalEnv = z.object({
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  /** TLS client certificate and key (PEM file paths) for a self-hosted cluster with mTLS. */
  TEMPORAL_TLS_CERT: z.string().optional(),
  TEMPORAL_TLS_KEY: z.string().optional(),
  /** CA certificate (PEM file path) for a cluster whose server certificate is not publicly trusted. */
  TEMPORAL_TLS_CA: z.string().optional(),
  /** Server name to verify in the server certificate when it differs from the address's host. */
  TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  /** API key for Temporal Cloud; implies TLS. */
  TEMPORAL_API_KEY: z.string().optional(),
  TEMPORAL_CLI_PATH: z.string().optional(),
  /** Where a Temporal CLI built or downloaded by msgflow is cached (default `${XDG_CACHE_HOME:-~/.cache}/msgflow`). */
  MSGFLOW_CACHE_DIR: z.string().min(1).optional(),
});
export type TemporalEnv = z.infer<typeof TemporalEnv>;

export const WorkerEnv = z.object({
  /** The workflows' task queue; provider calls run on `${MSGFLOW_TASK_QUEUE}-provider`. */
  MSGFLOW_TASK_QUEUE: z.string().min(1).default('msgflow'),
});
export type WorkerEnv = z.infer<typeof WorkerEnv>;

export const ProviderEnv = z.object({
  MSGFLOW_API_BASE_URL: z.url().default('http://127.0.0.1:4010/v1'),
  MSGFLOW_API_TOKEN: z.string().min(1).optional(),
  /** The token's request limit; the provider task queue is throttled to it across all workers. */
  MSGFLOW_RATE_LIMIT_PER_MINUTE: z.coerce.number().positive().default(120),
});
export type ProviderEnv = z.infer<typeof ProviderEnv>;

export const IngressEnv = z.object({
  MSGFLOW_INGRESS_HOST: z.string().default('127.0.0.1'),
  MSGFLOW_INGRESS_PORT: port.default(4020),
  /** Accepted webhook signing secrets (whsec_…), comma-separated: the current and, while rotating, the previous. */
  MSGFLOW_WEBHOOK_SECRETS: list.optional(),
});
export type IngressEnv = z.infer<typeof IngressEnv>;

export const SandboxEnv = z.object({
  MSGFLOW_SANDBOX_HOST: z.string().default('127.0.0.1'),
  MSGFLOW_SANDBOX_PORT: port.default(4010),
  MSGFLOW_SANDBOX_DB: z.string().default(`${DATA_DIR}/sandbox.db`),
  MSGFLOW_SANDBOX_ADMIN_TOKEN: z.string().min(16).optional(),
});
export type SandboxEnv = z.infer<typeof SandboxEnv>;

export const EncryptionEnv = z.object({
  /** base64 AES-256 key, or `id:key` pairs comma-separated (the first encrypts, all decrypt) for rotation. */
  MSGFLOW_ENCRYPTION_KEY: z.string().min(1).optional(),
});
export type EncryptionEnv = z.infer<typeof EncryptionEnv>;
