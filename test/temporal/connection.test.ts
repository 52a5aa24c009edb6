/** Connection settings from the environment, and real connections to the run's Temporal server. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, parseEnv, TemporalEnv } from '../../src/config.js';
import { connectClient, connectionSettings, connectWorkerConnection } from '../../src/temporal/connection.js';

const envOf = (vars: Record<string, string>) => parseEnv(TemporalEnv, vars);

describe('connectionSettings', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'msgflow-tls-'));
    await writeFile(join(dir, 'client.pem'), 'CERT');
    await writeFile(join(dir, 'client.key'), 'KEY');
    await writeFile(join(dir, 'ca.pem'), 'CA');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('defaults to the local dev server, namespace default, no TLS', async () => {
    await expect(connectionSettings(envOf({}))).resolves.toEqual({ address: '127.0.0.1:7233', namespace: 'default' });
  });

  it('reads the mTLS client certificate, key, CA and server name', async () => {
    const settings = await connectionSettings(
      envOf({
        TEMPORAL_ADDRESS: 'temporal.internal:7233',
        TEMPORAL_NAMESPACE: 'prod',
        TEMPORAL_TLS_CERT: join(dir, 'client.pem'),
        TEMPORAL_TLS_KEY: join(dir, 'client.key'),
        TEMPORAL_TLS_CA: join(dir, 'ca.pem'),
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
    await expect(connectionSettings(envOf({ TEMPORAL_TLS_CERT: join(dir, 'client.pem') }))).rejects.toThrow(
      new ConfigError('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (mTLS client certificate and key)'),
    );
  });

  it('names the variable whose file cannot be read', async () => {
    const missing = join(dir, 'missing.pem');
    await expect(
      connectionSettings(envOf({ TEMPORAL_TLS_CERT: missing, TEMPORAL_TLS_KEY: join(dir, 'client.key') })),
    ).rejects.toThrow(new ConfigError(`TEMPORAL_TLS_CERT: cannot read ${missing} (ENOENT)`));
  });
});

describe('connecting to the run-wide server', () => {
  const { address, namespace } = inject('temporal');
  const env = envOf({ TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace });

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

  it('connectWorkerConnection connects the native (worker) side', async () => {
    const connection = await connectWorkerConnection(env);
    try {
      const info = await connection.workflowService.getSystemInfo({});
      expect(info.serverVersion).toMatch(/^\d+\.\d+/);
    } finally {
      await connection.close();
    }
  });
});
