/** Connection settings from the environment and temporal.toml profiles, and real connections to the run's server. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import {
  configuredAddress,
  connectClient,
  connectionSettings,
  lazyClient,
  RECONNECT_CHANNEL_ARGS,
  TemporalUnreachableError,
} from '../../src/temporal/connection.js';
import { connectWorkerConnection } from '../../src/temporal/worker-connection.js';

/** Only the variables given: no profile of the machine's user (HOME points nowhere) leaks in. */
const envOf = (vars: Record<string, string>): NodeJS.ProcessEnv => ({ HOME: '/nonexistent', ...vars });

describe('connectionSettings', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'msgflow-tls-'));
    await writeFile(join(dir, 'client.pem'), 'CERT');
    await writeFile(join(dir, 'client.key'), 'KEY');
    await writeFile(join(dir, 'ca.pem'), 'CA');
    await writeFile(
      join(dir, 'temporal.toml'),
      [
        '[profile.default]',
        'address = "default.example:7233"',
        '',
        '[profile.staging]',
        'address = "staging.temporal.internal:7233"',
        'namespace = "staging"',
        '',
        '[profile.staging.tls]',
        `client_cert_path = "${join(dir, 'client.pem')}"`,
        `client_key_path = "${join(dir, 'client.key')}"`,
        '',
        '[profile.cloud]',
        'address = "eu-west-1.aws.api.temporal.io:7233"',
        'namespace = "ns.acct"',
        'api_key = "profile-key"',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('defaults to the local dev server, namespace default, no TLS', async () => {
    await expect(connectionSettings(envOf({}))).resolves.toEqual({ address: '127.0.0.1:7233', namespace: 'default' });
  });

  it('reads the address, namespace and TLS of the profile TEMPORAL_PROFILE names in TEMPORAL_CONFIG_FILE', async () => {
    const env = envOf({ TEMPORAL_CONFIG_FILE: join(dir, 'temporal.toml'), TEMPORAL_PROFILE: 'staging' });
    await expect(connectionSettings(env)).resolves.toEqual({
      address: 'staging.temporal.internal:7233',
      namespace: 'staging',
      tls: { clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') } },
    });
    expect(configuredAddress(env)).toBe('staging.temporal.internal:7233');
  });

  it('lays the TEMPORAL_* variables over the profile', async () => {
    const settings = await connectionSettings(
      envOf({
        TEMPORAL_CONFIG_FILE: join(dir, 'temporal.toml'),
        TEMPORAL_PROFILE: 'cloud',
        TEMPORAL_NAMESPACE: 'other.acct',
        TEMPORAL_API_KEY: 'env-key',
      }),
    );
    expect(settings).toEqual({
      address: 'eu-west-1.aws.api.temporal.io:7233',
      namespace: 'other.acct',
      tls: true,
      apiKey: 'env-key',
      metadata: { 'temporal-namespace': 'other.acct' },
    });
  });

  it("reads the mTLS client certificate, key, CA and server name from Temporal's variables", async () => {
    const settings = await connectionSettings(
      envOf({
        TEMPORAL_ADDRESS: 'temporal.internal:7233',
        TEMPORAL_NAMESPACE: 'prod',
        TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'client.pem'),
        TEMPORAL_TLS_CLIENT_KEY_PATH: join(dir, 'client.key'),
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'ca.pem'),
        TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal.internal',
      }),
    );
    expect(settings).toEqual({
      address: 'temporal.internal:7233',
      namespace: 'prod',
      tls: {
        clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
        serverRootCACertificate: Buffer.from('CA'),
        serverNameOverride: 'frontend.temporal.internal',
      },
    });
  });

  it('turns an API key into TLS plus the namespace header (Temporal Cloud)', async () => {
    const settings = await connectionSettings(
      envOf({
        TEMPORAL_ADDRESS: 'eu-west-1.aws.api.temporal.io:7233',
        TEMPORAL_NAMESPACE: 'ns.acct',
        TEMPORAL_API_KEY: 'secret-key',
      }),
    );
    expect(settings).toEqual({
      address: 'eu-west-1.aws.api.temporal.io:7233',
      namespace: 'ns.acct',
      tls: true,
      apiKey: 'secret-key',
      metadata: { 'temporal-namespace': 'ns.acct' },
    });
  });

  it('rejects a certificate without its key', async () => {
    await expect(connectionSettings(envOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'client.pem') }))).rejects.toThrow(
      new ConfigError(
        "TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (or the profile's client_cert and client_key) must be set together",
      ),
    );
  });

  it('names the file that cannot be read', async () => {
    const missing = join(dir, 'missing.pem');
    await expect(
      connectionSettings(
        envOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: missing, TEMPORAL_TLS_CLIENT_KEY_PATH: join(dir, 'client.key') }),
      ),
    ).rejects.toThrow(new ConfigError(`Temporal TLS settings: cannot read ${missing} (ENOENT)`));
  });

  it('names a profile that is not in the file', async () => {
    const file = join(dir, 'temporal.toml');
    await expect(connectionSettings(envOf({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' }))).rejects.toThrow(
      new ConfigError(`Temporal profile (TEMPORAL_CONFIG_FILE=${file}): Profile 'prod' not found in config data`),
    );
  });

  it("refuses msgflow's former TLS variable names, naming Temporal's", async () => {
    await expect(connectionSettings(envOf({ TEMPORAL_TLS_CERT: join(dir, 'client.pem') }))).rejects.toThrow(
      'TEMPORAL_TLS_CERT: is no longer read: use TEMPORAL_TLS_CLIENT_CERT_PATH',
    );
  });

  it('lets a dev stack start its own server unless a server is named explicitly', () => {
    const file = join(dir, 'temporal.toml');
    expect(configuredAddress(envOf({}))).toBeUndefined();
    expect(configuredAddress(envOf({ TEMPORAL_ADDRESS: '10.0.0.5:7233' }))).toBe('10.0.0.5:7233');
    expect(configuredAddress(envOf({ TEMPORAL_CONFIG_FILE: file }))).toBe('default.example:7233');
  });
});

describe('connecting to the run-wide server', () => {
  const { address, namespace } = inject('temporal');
  const env = envOf({ TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace });
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'msgflow-profile-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('connectClient gives a client for the configured namespace', async () => {
    const client = await connectClient(env);
    try {
      expect(client.options.namespace).toBe(namespace);
      const info = await client.workflowService.getSystemInfo({});
      expect(info.capabilities?.signalAndQueryHeader).toBe(true);
      const described = await client.workflowService.describeNamespace({ namespace });
      expect(described.namespaceInfo?.name).toBe(namespace);
    } finally {
      await client.connection.close();
    }
  });

  it('connects through a temporal.toml profile', async () => {
    const file = join(dir, 'temporal.toml');
    await writeFile(file, `[profile.local]\naddress = "${address}"\nnamespace = "${namespace}"\n`);
    const client = await connectClient(envOf({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'local' }));
    try {
      expect(client.options.namespace).toBe(namespace);
      const described = await client.workflowService.describeNamespace({ namespace });
      expect(described.namespaceInfo?.name).toBe(namespace);
    } finally {
      await client.connection.close();
    }
  });

  it('names the address it could not reach', { timeout: 30_000 }, async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const closed = `127.0.0.1:${port}`;
    const failure = await connectClient(envOf({ TEMPORAL_ADDRESS: closed })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TemporalUnreachableError);
    expect((failure as Error).message).toMatch(new RegExp(`^cannot connect to Temporal at ${closed} \\(`));
    expect((failure as Error).message).toContain('`msgflow dev` (from a checkout: `npm run msgflow -- dev`)');
  });

  it('tries to reconnect to a lost server twice a second (not on the SDK backoff of up to two minutes)', async () => {
    const client = await lazyClient(envOf({ TEMPORAL_ADDRESS: '127.0.0.1:1' }));
    try {
      expect((client.connection as Connection).options.channelArgs).toMatchObject(RECONNECT_CHANNEL_ARGS);
    } finally {
      await client.connection.close();
    }
  });

  it('connectWorkerConnection connects the native (worker) side', async () => {
    const { connection, namespace: polled } = await connectWorkerConnection(env);
    expect(polled).toBe(namespace);
    try {
      const info = await connection.workflowService.getSystemInfo({});
      expect(info.serverVersion).toMatch(/^\d+\.\d+/);
    } finally {
      await connection.close();
    }
  });
});
