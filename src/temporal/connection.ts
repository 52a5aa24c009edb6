/**
 * Connections to Temporal from the environment (TemporalEnv): the dev server, a self-hosted cluster
 * with mTLS, or Temporal Cloud with an API key. Clients and workers read the same settings the same way.
 */
import { readFile } from 'node:fs/promises';
import { Client, Connection, type ClientOptions } from '@temporalio/client';
import { ConfigError, parseEnv, TemporalEnv } from '../config.js';
import { dataConverterFromEnv } from './data-converter.js';

/** What `msgflow temporal server` listens on; used when TEMPORAL_ADDRESS is not set. */
export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';

interface TlsSettings {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

/** Options shared by `Connection` (client) and `NativeConnection` (worker). */
export interface TemporalConnectionSettings {
  address: string;
  namespace: string;
  tls?: TlsSettings | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

export async function connectionSettings(
  env: TemporalEnv = parseEnv(TemporalEnv),
): Promise<TemporalConnectionSettings> {
  const settings: TemporalConnectionSettings = {
    address: env.TEMPORAL_ADDRESS ?? DEFAULT_TEMPORAL_ADDRESS,
    namespace: env.TEMPORAL_NAMESPACE,
  };
  if (Boolean(env.TEMPORAL_TLS_CERT) !== Boolean(env.TEMPORAL_TLS_KEY)) {
    throw new ConfigError(
      'TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (mTLS client certificate and key)',
    );
  }
  const tls: TlsSettings = {};
  if (env.TEMPORAL_TLS_CERT && env.TEMPORAL_TLS_KEY) {
    tls.clientCertPair = {
      crt: await readPem('TEMPORAL_TLS_CERT', env.TEMPORAL_TLS_CERT),
      key: await readPem('TEMPORAL_TLS_KEY', env.TEMPORAL_TLS_KEY),
    };
  }
  if (env.TEMPORAL_TLS_CA) tls.serverRootCACertificate = await readPem('TEMPORAL_TLS_CA', env.TEMPORAL_TLS_CA);
  if (env.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = env.TEMPORAL_TLS_SERVER_NAME;
  if (Object.keys(tls).length > 0) settings.tls = tls;
  if (env.TEMPORAL_API_KEY) {
    settings.apiKey = env.TEMPORAL_API_KEY;
    settings.tls ??= true; // Temporal Cloud only accepts API keys over TLS
    // Cloud's regional endpoints route API-key requests by this header.
    settings.metadata = { 'temporal-namespace': env.TEMPORAL_NAMESPACE };
  }
  return settings;
}

async function readPem(variable: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new ConfigError(`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? error})`);
  }
}

export function parsedEnv(env?: TemporalEnv): TemporalEnv {
  return env ?? parseEnv(TemporalEnv);
}

/**
 * A `Client` for the configured namespace. Extra options (interceptors, …) pass through; the data converter
 * defaults to msgflow's from the process environment (payloads encrypted when MSGFLOW_ENCRYPTION_KEY is set).
 * The caller closes it with `client.connection.close()`.
 */
export async function connectClient(
  env?: TemporalEnv,
  options: Omit<ClientOptions, 'connection' | 'namespace'> = {},
): Promise<Client> {
  const { namespace, ...connectionOptions } = await connectionSettings(parsedEnv(env));
  const connection = await Connection.connect(connectionOptions);
  return new Client({ dataConverter: dataConverterFromEnv(), ...options, connection, namespace });
}
