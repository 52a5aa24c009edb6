/**
 * Connections to Temporal, configured the way every Temporal tool is: @temporalio/envconfig reads a profile of
 * `temporal.toml` (TEMPORAL_CONFIG_FILE, default `~/.config/temporalio/temporal.toml`; profile TEMPORAL_PROFILE,
 * default `default`) and lays the standard variables over it (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH/DATA, TEMPORAL_TLS_CLIENT_KEY_PATH/DATA,
 * TEMPORAL_TLS_SERVER_CA_CERT_PATH/DATA, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_*). Clients and workers
 * read the same settings the same way; a failed connection names the address it tried.
 */
import { Client, Connection, type ClientOptions } from '@temporalio/client';
import { type ClientConfigProfile, loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import { ConfigError, parseEnv, TemporalEnv } from '../config.js';
import { dataConverterFromEnv } from './data-converter.js';
import { tracingClientInterceptors } from '../tracing/setup.js';

/** What `msgflow temporal server` listens on; used when neither a variable nor a profile names a server. */
export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_NAMESPACE = 'default';

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

/** A Temporal server that did not answer: the message names the address and how to start a local one. */
export class TemporalUnreachableError extends Error {
  override name = 'TemporalUnreachableError';
  constructor(
    readonly address: string,
    cause: unknown,
  ) {
    super(
      `cannot connect to Temporal at ${address} (${cause instanceof Error ? cause.message : String(cause)}). ` +
        'Start a local stack with `msgflow dev` (from a checkout: `npm run msgflow -- dev`), or point ' +
        'TEMPORAL_ADDRESS or TEMPORAL_PROFILE at a running server.',
      { cause },
    );
  }
}

/**
 * The profile as @temporalio/envconfig resolves it from `env`, its failures as ConfigErrors. `settings` is `env`
 * checked by TemporalEnv (which refuses msgflow's former variable names): a worker hands over its one parse.
 */
function loadProfile(env: NodeJS.ProcessEnv, settings: TemporalEnv): ClientConfigProfile {
  try {
    return loadClientConfigProfile({ overrideEnvVars: definedOnly(env) });
  } catch (error) {
    const file = settings.TEMPORAL_CONFIG_FILE;
    const where = file ? ` (TEMPORAL_CONFIG_FILE=${file})` : '';
    throw new ConfigError(`Temporal profile${where}: ${(error as Error).message}`);
  }
}

/**
 * Whether `env` names a Temporal server: TEMPORAL_ADDRESS, or an address in a profile chosen with
 * TEMPORAL_PROFILE or TEMPORAL_CONFIG_FILE. (`msgflow dev` starts its own server otherwise; a default profile
 * in the user's config file is not enough, so a development stack never lands on a production cluster.)
 */
export function configuredAddress(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.TEMPORAL_ADDRESS) return env.TEMPORAL_ADDRESS;
  if (!env.TEMPORAL_PROFILE && !env.TEMPORAL_CONFIG_FILE) return undefined;
  return loadProfile(env, parseEnv(TemporalEnv, env)).address;
}

/**
 * Connection settings from `env` (the process environment by default): profile, then variables over it.
 * `checked` is `env` parsed by TemporalEnv already (a worker's WorkerSettings); without it, it is parsed here.
 */
export async function connectionSettings(
  env: NodeJS.ProcessEnv = process.env,
  checked: TemporalEnv = parseEnv(TemporalEnv, env),
): Promise<TemporalConnectionSettings> {
  const profile = loadProfile(env, checked);
  const tls = profile.tls;
  if (Boolean(tls?.clientCert) !== Boolean(tls?.clientKey)) {
    throw new ConfigError(
      "TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (or the profile's client_cert and client_key) must be set together",
    );
  }
  return settingsOf(clientOptionsOf(profile));
}

/** envconfig's client options for a profile; a certificate it cannot read is a ConfigError naming the file. */
function clientOptionsOf(profile: ClientConfigProfile): ReturnType<typeof toClientOptions> {
  try {
    return toClientOptions(profile);
  } catch (error) {
    const { code, path } = error as NodeJS.ErrnoException;
    throw new ConfigError(`Temporal TLS settings: cannot read ${path ?? 'a certificate file'} (${code ?? error})`);
  }
}

/** The connection settings of envconfig's client options: defaults filled in, TLS as Buffers, API-key routing. */
function settingsOf(options: ReturnType<typeof toClientOptions>): TemporalConnectionSettings {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const { address, apiKey, metadata } = options.connectionOptions;
  const settings: TemporalConnectionSettings = { address: address ?? DEFAULT_TEMPORAL_ADDRESS, namespace };
  const tlsOptions = options.connectionOptions.tls;
  if (typeof tlsOptions === 'boolean') settings.tls = tlsOptions;
  else if (tlsOptions) settings.tls = tlsSettings(tlsOptions);
  if (apiKey) {
    settings.apiKey = apiKey;
    // Cloud's regional endpoints route API-key requests by this header.
    settings.metadata = { 'temporal-namespace': namespace };
  }
  if (metadata && Object.keys(metadata).length)
    settings.metadata = { ...settings.metadata, ...(metadata as Record<string, string>) };
  return settings;
}

/**
 * A `Client` for the configured namespace. Extra options (interceptors, …) pass through; the data converter
 * defaults to msgflow's from the process environment (payloads encrypted when MSGFLOW_ENCRYPTION_KEY is set), the
 * interceptors to the tracing ones when this process traces.
 * The caller closes it with `client.connection.close()`.
 */
export async function connectClient(
  env: NodeJS.ProcessEnv = process.env,
  options: Omit<ClientOptions, 'connection' | 'namespace'> = {},
): Promise<Client> {
  const client = await lazyClient(env, options);
  await ensureReachable(client);
  return client;
}

/**
 * connectClient without waiting for Temporal: the connection is made by the first call that needs it, so a
 * process that can do useful work without Temporal (the ingress) starts while Temporal is down.
 */
export async function lazyClient(
  env: NodeJS.ProcessEnv = process.env,
  options: Omit<ClientOptions, 'connection' | 'namespace'> = {},
): Promise<Client> {
  const { namespace, ...connectionOptions } = await connectionSettings(env);
  return new Client({
    dataConverter: dataConverterFromEnv(env),
    interceptors: tracingClientInterceptors(),
    ...options,
    connection: Connection.lazy({ ...connectionOptions, channelArgs: RECONNECT_CHANNEL_ARGS }),
    namespace,
  });
}

/**
 * While the server is down, try to reconnect twice a second: grpc-js waits 1 s before its first attempt and backs
 * off up to two minutes between attempts, so a relay (or any long-lived client) would stay away that long after
 * Temporal is back (after a 3-minute outage, 47 s measured; after one minute, 20 s), and a send made just after
 * an outage would wait for the reconnect. An attempt every half second costs nothing noticeable.
 */
export const RECONNECT_CHANNEL_ARGS = {
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 500,
};

/** Resolves once the client's server answers (within the connection's 10 s connect timeout); else names it. */
export async function ensureReachable(client: Client): Promise<void> {
  await client.connection.ensureConnected().catch((error: unknown) => {
    throw new TemporalUnreachableError((client.connection as Connection).options.address, error);
  });
}

/** envconfig reads certificates as Uint8Arrays; the connections take Buffers. */
function tlsSettings(tls: {
  serverNameOverride?: string;
  serverRootCACertificate?: Uint8Array | null;
  clientCertPair?: { crt: Uint8Array; key: Uint8Array } | null;
}): TlsSettings {
  const { serverNameOverride, serverRootCACertificate, clientCertPair } = tls;
  return definedOnly({
    serverNameOverride,
    serverRootCACertificate: serverRootCACertificate ? Buffer.from(serverRootCACertificate) : undefined,
    clientCertPair: clientCertPair
      ? { crt: Buffer.from(clientCertPair.crt), key: Buffer.from(clientCertPair.key) }
      : undefined,
  });
}

function definedOnly<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}
