/**
 * `msgflow dev` as a user runs it, in a folder of its own on free ports: it prints its sandbox account and
 * writes it to .data/dev.env, where the `msgflow sandbox …` helpers find it without `--account`, also after a
 * restart that reuses the account's token; on busy ports it names each with its flag and starts nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { workflowBuildId } from '../../src/temporal/build-id.js';
import type { DeploymentStatus } from '../../src/temporal/deployment-status.js';
import { runMsgflow } from '../support/cli.js';

const root = resolve(import.meta.dirname, '../..');
const cwd = mkdtempSync(join(tmpdir(), 'dev-cli-'));
const elsewhere = mkdtempSync(join(tmpdir(), 'dev-cli-elsewhere-'));
const PORT_FLAGS = [
  '--temporal-port',
  '--ui-port',
  '--sandbox-port',
  '--ingress-port',
  '--codec-port',
  '--worker-metrics-port',
];

/** Free loopback ports, one per flag (closed again before use). */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => {
      const server = createServer();
      return new Promise<ReturnType<typeof createServer>>((r) => server.listen(0, '127.0.0.1', () => r(server)));
    }),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

const inherited = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('MSGFLOW_') && !k.startsWith('TEMPORAL_')),
);

interface Dev {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startDev(
  ports: number[],
  { folder = cwd, env = {} }: { folder?: string; env?: Record<string, string> } = {},
): Dev {
  const args = PORT_FLAGS.flatMap((flag, i) => [flag, String(ports[i])]);
  const child = spawn(join(root, 'node_modules/.bin/tsx'), [join(root, 'src/cli/main.ts'), 'dev', ...args], {
    cwd: folder,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

/** Resolves with the output once `msgflow dev` is ready; fails if it exits first. */
async function ready(dev: Dev): Promise<string> {
  const ended = dev.exited.then((code) => {
    throw new Error(`msgflow dev exited with ${code}: ${dev.output()}`);
  });
  const running = (async () => {
    while (!dev.output().includes('msgflow dev is running:')) await new Promise((r) => setTimeout(r, 200));
    return dev.output();
  })();
  return Promise.race([running, ended]);
}

async function stop(dev: Dev): Promise<void> {
  if (dev.child.exitCode !== null) return;
  dev.child.kill('SIGTERM');
  await dev.exited;
}

const devEnv = () =>
  Object.fromEntries(
    readFileSync(join(cwd, '.data/dev.env'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

/** The dev server's `msgflow` endpoint (id, version, target) and whether the `callers` namespace exists. */
async function devNexus(): Promise<{ endpoint: unknown; callers: boolean }> {
  const connection = await Connection.connect({ address: devEnv().TEMPORAL_ADDRESS! });
  try {
    const { endpoints } = await connection.operatorService.listNexusEndpoints({ name: 'msgflow' });
    const callers = await connection.workflowService.describeNamespace({ namespace: 'callers' }).then(
      () => true,
      () => false,
    );
    const endpoint = endpoints?.[0];
    return {
      endpoint: endpoint && {
        id: endpoint.id,
        version: String(endpoint.version),
        target: { ...endpoint.spec?.target?.worker },
      },
      callers,
    };
  } finally {
    await connection.close();
  }
}

describe('msgflow dev', () => {
  const started: Dev[] = [];
  afterAll(async () => {
    for (const dev of started) await stop(dev);
    rmSync(cwd, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it(
    'prints its sandbox account, which the sandbox helpers use without --account, also after a restart',
    { timeout: 240_000 },
    async () => {
      const ports = await freePorts(PORT_FLAGS.length);
      const first = startDev(ports);
      started.push(first);
      const output = await ready(first);
      const printed = /Sandbox API .*\(account (acct_\S+),/.exec(output)?.[1];
      expect(printed).toBeDefined();
      expect(devEnv().MSGFLOW_SANDBOX_ACCOUNT).toBe(printed);
      // The default team's Nexus endpoint into msgflow's namespace and queue, and a namespace to call it from.
      expect(output).toContain(
        'Nexus         endpoint msgflow → queue msgflow (team default); call from namespace callers',
      );
      const nexus = await devNexus();
      expect(nexus).toEqual({
        endpoint: {
          id: expect.any(String),
          version: expect.any(String),
          target: { namespace: 'default', taskQueue: 'msgflow' },
        },
        callers: true,
      });
      // The worker's deployment and build, made current on start: the status command finds it through dev.env.
      expect(output).toContain(`Worker        deployment msgflow, build ${workflowBuildId()} (current;`);
      const deployment = await runMsgflow(['deployment', 'status', '--json'], { cwd });
      expect(deployment.code).toBe(0);
      expect(JSON.parse(deployment.stdout) as DeploymentStatus).toMatchObject({
        deployment: 'msgflow',
        currentBuildId: workflowBuildId(),
      });

      const paused = await runMsgflow(['sandbox', 'webhooks', 'pause', '--json'], { cwd });
      expect(paused.stderr).toBe('');
      expect(JSON.parse(paused.stdout)).toEqual({ account: printed, paused: true });
      expect((await runMsgflow(['sandbox', 'webhooks', 'resume'], { cwd })).code).toBe(0);
      const deliveries = await runMsgflow(['sandbox', 'deliveries', '--json'], { cwd });
      expect(deliveries.code).toBe(0);
      expect(JSON.parse(deliveries.stdout)).toEqual(expect.any(Array));

      // Without dev.env and without --account: a clear error, not a request for an empty account.
      const env = { MSGFLOW_SANDBOX_URL: devEnv().MSGFLOW_SANDBOX_URL!, MSGFLOW_SANDBOX_ADMIN_TOKEN: 'x'.repeat(16) };
      const bare = await runMsgflow(['sandbox', 'deliveries'], { cwd: elsewhere, env });
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain('give --account <id>');

      // A restart reuses the token of dev.env: the same account, found again.
      await stop(first);
      const second = startDev(ports);
      started.push(second);
      expect(/Sandbox API .*\(account (acct_\S+),/.exec(await ready(second))?.[1]).toBe(printed);
      expect(devEnv().MSGFLOW_SANDBOX_ACCOUNT).toBe(printed);
      // The endpoint as it was: not made again, nor changed.
      expect(await devNexus()).toEqual(nexus);
    },
  );

  it(
    'runs campaigns through the audience loaders MSGFLOW_AUDIENCE_LOADERS names, as a worker does',
    {
      timeout: 240_000,
    },
    async () => {
      const folder = mkdtempSync(join(tmpdir(), 'dev-cli-loaders-'));
      const loaded = ['2348030000101', '2348030000102'];
      writeFileSync(
        join(folder, 'loaders.mjs'),
        `export const audienceLoaders = {
        dueCustomers: { readPage: async () => ({ recipients: ${JSON.stringify(loaded)}, nextCursor: null }) },
      };\n`,
      );
      const dev = startDev(await freePorts(PORT_FLAGS.length), {
        folder,
        env: { MSGFLOW_AUDIENCE_LOADERS: './loaders.mjs' },
      });
      started.push(dev);
      try {
        await ready(dev);
        const start = ['campaign', 'start', '--sender', 'ACME', '--message', 'Your payment is due'];
        const campaign = await runMsgflow([...start, '--loader', 'dueCustomers', '--wait'], { cwd: folder });
        expect(campaign.stderr).toBe('');
        expect(campaign.stdout).toMatch(/completed: 2 sent/);
      } finally {
        await stop(dev);
        rmSync(folder, { recursive: true, force: true });
      }
    },
  );

  it('refuses bad worker settings before it starts anything', { timeout: 60_000 }, async () => {
    const folder = mkdtempSync(join(tmpdir(), 'dev-cli-settings-'));
    try {
      const bad = await runMsgflow(['dev'], { cwd: folder, env: { MSGFLOW_TEAM_WEIGHTS: 'clinic:x' } });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('"clinic:x": the weight must be a number');
      expect(existsSync(join(folder, '.data/temporal.db'))).toBe(false);

      const teams = await runMsgflow(['dev'], {
        cwd: folder,
        env: { MSGFLOW_NEXUS: 'false', MSGFLOW_NEXUS_TEAMS: 'clinic' },
      });
      expect(teams.code).toBe(2);
      expect(teams.stderr).toContain('MSGFLOW_NEXUS_TEAMS names teams for the Nexus service: set MSGFLOW_NEXUS=true');
      expect(existsSync(join(folder, '.data/temporal.db'))).toBe(false);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('names every busy port with the flag that moves it, and starts nothing', { timeout: 60_000 }, async () => {
    const ports = await freePorts(PORT_FLAGS.length);
    const holders = await Promise.all(
      [ports[2]!, ports[5]!].map(
        (port) =>
          new Promise<Server>((r) => {
            const s = createServer();
            s.listen(port, '127.0.0.1', () => r(s));
          }),
      ),
    );
    const folder = mkdtempSync(join(tmpdir(), 'dev-cli-busy-'));
    try {
      const args = PORT_FLAGS.flatMap((flag, i) => [flag, String(ports[i])]);
      const busy = await runMsgflow(['dev', ...args], { cwd: folder });
      expect(busy.code).toBe(1);
      expect(busy.stderr).toContain(`port ${ports[2]} (sandbox, --sandbox-port) is in use`);
      expect(busy.stderr).toContain(`port ${ports[5]} (worker metrics, --worker-metrics-port) is in use`);
      expect(busy.stderr).not.toContain(`port ${ports[0]} `);
      expect(busy.stdout).not.toContain('starting Temporal');
      expect(existsSync(join(folder, '.data/temporal.db'))).toBe(false);

      const bad = await runMsgflow(['dev', '--ingress-port', 'http'], { cwd: folder });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--ingress-port must be a port number (0-65535), not "http"');
    } finally {
      await Promise.all(holders.map((h) => new Promise((r) => h.close(r))));
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
