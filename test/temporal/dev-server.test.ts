/**
 * The dev server for real: started by the run's global setup and by these tests with the Temporal CLI
 * the resolution finds (cached on a prepared machine; `.ci/run` prepares it).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../src/definitions/search-attributes.js';
import { resolveTemporalCli } from '../../src/temporal/cli.js';
import { type DevServer, ensureTemporal, startDevServer } from '../../src/temporal/dev-server.js';
import { registerSearchAttributes } from '../../src/temporal/search-attribute-registration.js';
import { isAlive } from '../../src/temporal/file-lock.js';

const { google, temporal } = proto;
const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
const msgflowNames = Object.keys(SEARCH_ATTRIBUTE_DEFINITIONS);

async function customAttributes(connection: Connection, namespace: string): Promise<Record<string, unknown>> {
  const list = await connection.operatorService.listSearchAttributes({ namespace });
  return { ...list.customAttributes };
}

describe('the run-wide server (global setup)', () => {
  it('answers gRPC at the injected address and has msgflow search attributes', async () => {
    const { address, namespace } = inject('temporal');
    const connection = await Connection.connect({ address });
    try {
      const info = await connection.workflowService.getSystemInfo({});
      expect(info.serverVersion).toMatch(/^\d+\.\d+/);
      const custom = await customAttributes(connection, namespace);
      for (const name of msgflowNames) expect(custom[name], name).toBe(KEYWORD);
    } finally {
      await connection.close();
    }
  });
});

describe('startDevServer', () => {
  let cli: string;
  let server: DevServer | undefined;
  let dir: string;

  beforeAll(async () => {
    cli = await resolveTemporalCli();
    dir = await mkdtemp(join(tmpdir(), 'msgflow-devserver-'));
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('serves a custom namespace with the search attributes, on loopback, and stop() leaves no process', async () => {
    const dbFile = join(dir, 'nested', 'temporal.db');
    server = await startDevServer({ cliPath: cli, namespace: 'msgflow-test', dbFile });
    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(server.namespace).toBe('msgflow-test');
    expect(server.uiUrl).toBeUndefined();
    expect((await stat(dbFile)).isFile()).toBe(true);

    const connection = await Connection.connect({ address: server.address });
    try {
      const custom = await customAttributes(connection, 'msgflow-test');
      expect(Object.keys(custom)).toEqual(expect.arrayContaining(msgflowNames));
      for (const name of msgflowNames) expect(custom[name], name).toBe(KEYWORD);
      // One partition per queue, so the provider queue's rate is not split across partitions.
      const partitions = await connection.workflowService.listTaskQueuePartitions({
        namespace: 'msgflow-test',
        taskQueue: { name: 'msgflow-provider' },
      });
      expect(partitions.activityTaskQueuePartitions).toHaveLength(1);
      expect(partitions.workflowTaskQueuePartitions).toHaveLength(1);
    } finally {
      await connection.close();
    }

    const pid = server.pid;
    expect(pid).toBeGreaterThan(0);
    expect(isAlive(pid!)).toBe(true);
    await server.stop();
    expect(isAlive(pid!)).toBe(false);
    expect(() => process.kill(-pid!, 0), 'no process left in its group').toThrow(/ESRCH/);
    await server.stop(); // idempotent
  });

  it('runs the Web UI on the requested port when asked', async () => {
    server = await startDevServer({ cliPath: cli, uiPort: 0 });
    expect(server.uiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const ui = await fetch(server.uiUrl!);
    expect(ui.status).toBe(200);
  });

  it('fails clearly, with the server output, when its port is taken', async () => {
    const sockets = new Set<Socket>();
    const blocker: Server = createServer((socket) => {
      sockets.add(socket); // the readiness probe may connect to it
    });
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(startDevServer({ cliPath: cli, port, readyTimeoutMs: 30_000 })).rejects.toThrow(
        /Temporal dev server .*Its last output:\n[\s\S]*address already in use/,
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('fails clearly when the CLI cannot be run', async () => {
    await expect(startDevServer({ cliPath: join(dir, 'no-such-temporal') })).rejects.toThrow(
      /could not be started: .*ENOENT.*Likely fix: make .*no-such-temporal executable for this user, or set TEMPORAL_CLI_PATH/,
    );
  });
});

describe('registerSearchAttributes', () => {
  it('adds the missing attributes to a namespace, and is idempotent', async () => {
    const { address } = inject('temporal');
    const namespace = `msgflow-sa-${process.pid}-${Date.now()}`;
    const connection = await Connection.connect({ address });
    try {
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: google.protobuf.Duration.fromObject({ seconds: 24 * 3600 }),
      });
      // A new namespace reaches the frontend's cache shortly after registration.
      await expect
        .poll(
          () =>
            customAttributes(connection, namespace).then(
              () => true,
              () => false,
            ),
          { timeout: 30_000 },
        )
        .toBe(true);
      expect(Object.keys(await customAttributes(connection, namespace))).not.toContain('MsgflowKind');

      await registerSearchAttributes(connection, namespace);
      await registerSearchAttributes(connection, namespace);

      const custom = await customAttributes(connection, namespace);
      for (const name of msgflowNames) expect(custom[name], name).toBe(KEYWORD);
    } finally {
      await connection.close();
    }
  });
});

describe('ensureTemporal', () => {
  it('uses TEMPORAL_ADDRESS as is and starts nothing', async () => {
    const server = await ensureTemporal({ TEMPORAL_ADDRESS: '127.0.0.1:1', TEMPORAL_NAMESPACE: 'elsewhere', PATH: '' });
    expect(server).toMatchObject({ address: '127.0.0.1:1', namespace: 'elsewhere' });
    expect(server.pid).toBeUndefined();
    await server.stop();
  });
});
