/** `msgflow temporal …` as a user runs it: a real process, against the run's Temporal server. */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { realFs } from '../../src/temporal/cli.js';
import { freePort } from '../../src/temporal/dev-server.js';

const root = resolve(import.meta.dirname, '../..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const main = join(root, 'src', 'cli', 'main.ts');

/** The environment minus TEMPORAL_* settings, so each test states the ones it means. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_')));
  return { ...env, ...extra };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let cwd: string;

/** Runs the CLI from an empty directory, so no `.data/dev.env` of a developer's `msgflow dev` leaks in. */
function msgflow(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(tsx, [main, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolveProbe) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolveProbe(true);
    });
    socket.once('error', () => resolveProbe(false));
  });
}

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'msgflow-cli-'));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('msgflow temporal ensure', () => {
  it('prints the path of a runnable Temporal CLI', async () => {
    const run = await msgflow(['temporal', 'ensure'], cleanEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(realFs.isExecutable(run.stdout.trim())).toBe(true);
  });

  it('needs no CLI when TEMPORAL_ADDRESS names a server', async () => {
    const run = await msgflow(
      ['temporal', 'ensure'],
      cleanEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1', TEMPORAL_CLI_PATH: '/nowhere' }),
    );
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toContain('TEMPORAL_ADDRESS=127.0.0.1:1 is set');
  });

  it('reports a TEMPORAL_CLI_PATH that is not executable', async () => {
    const run = await msgflow(['temporal', 'ensure'], cleanEnv({ TEMPORAL_CLI_PATH: '/nowhere/temporal' }));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('TEMPORAL_CLI_PATH=/nowhere/temporal is not an executable file');
  });
});

describe('msgflow temporal setup', () => {
  const { address, namespace } = inject('temporal');

  it('registers (idempotently) the search attributes in the configured namespace', async () => {
    const run = await msgflow(
      ['temporal', 'setup'],
      cleanEnv({ TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`search attributes ready in namespace ${namespace}: MsgflowKind=Keyword`);
  });

  it('fails clearly for a namespace the server does not have', async () => {
    const run = await msgflow(
      ['temporal', 'setup'],
      cleanEnv({ TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'no-such-namespace' }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/NOT_FOUND.*no-such-namespace/);
  });
});

describe('msgflow temporal server', () => {
  it('serves in the foreground until SIGINT, then stops the server', async () => {
    const port = await freePort();
    const child = spawn(tsx, [main, 'temporal', 'server', '--port', String(port), '--headless', '--memory'], {
      cwd,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const closed = new Promise<number | null>((resolveClose) => child.on('close', resolveClose));
    const ready = new Promise<void>((resolveReady, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('Ctrl-C stops it')) resolveReady();
      });
      child.once('close', () => reject(new Error(`exited before serving:\n${stdout}`)));
    });
    try {
      await ready;
      expect(stdout).toContain(`Temporal dev server on 127.0.0.1:${port} (namespace default)`);
      expect(await accepts(port)).toBe(true);
    } finally {
      child.kill('SIGINT');
    }
    expect(await closed).toBe(0);
    expect(await accepts(port)).toBe(false);
  });

  it('rejects a bad port before starting anything', async () => {
    const run = await msgflow(['temporal', 'server', '--port', 'abc'], cleanEnv());
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("option '--port <port>' argument 'abc' is invalid. expected a port number, 1-65535");
  });
});

describe('msgflow conventions', () => {
  const { address, namespace } = inject('temporal');

  it('prints its version from package.json, and the build id of its workflow code', async () => {
    const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
    const run = await msgflow(['--version'], cleanEnv());
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${version} (build ${run.stdout.match(/\(build ([0-9a-f]{12})\)/)?.[1]})\n`);
  });

  it('reaches Temporal through a temporal.toml profile, and prints one JSON document with --json', async () => {
    const file = join(cwd, 'temporal.toml');
    await writeFile(file, `[profile.tests]\naddress = "${address}"\nnamespace = "${namespace}"\n`);
    const run = await msgflow(
      ['temporal', 'setup', '--json'],
      cleanEnv({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'tests' }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ namespace, searchAttributes: { MsgflowKind: 'Keyword' } });
  });

  it('names the address it could not reach and how to start a local stack', { timeout: 60_000 }, async () => {
    const closed = `127.0.0.1:${await freePort()}`;
    const run = await msgflow(['campaign', 'status', 'any', '--json'], cleanEnv({ TEMPORAL_ADDRESS: closed }));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`cannot connect to Temporal at ${closed}`);
    expect(run.stderr).toContain('npm run msgflow -- dev');
  });

  it('refuses a duration without a unit, saying how to write one', async () => {
    const run = await msgflow(
      ['sms', 'send', '--to', '2348012345678', '--sender', 'ACME', '--message', 'hi', '--wait-window', '30'],
      cleanEnv(),
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      `option '--wait-window <duration>' argument '30' is invalid. "30" has no unit: write 30s, 30m, …`,
    );
  });
});
