/**
 * Where the Temporal CLI comes from. The plan is pure over env + a fake file system; resolution runs it
 * with a fake builder/downloader where a real one would take minutes or the internet.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  builtCliPath,
  downloadedCliPath,
  findOnPath,
  msgflowCacheDir,
  planTemporalCli,
  resolveTemporalCli,
  TemporalCliError,
  type FsProbe,
} from '../../src/temporal/cli.js';
import { checkReachable } from '../../src/temporal/cli-install.js';

/** A file system where exactly `executables` exist. */
const fakeFs = (...executables: string[]): FsProbe => ({ isExecutable: (p) => executables.includes(p) });

const base = { HOME: '/home/dev', PATH: '/usr/local/bin:/usr/bin' };
const cacheBuilt = '/home/dev/.cache/msgflow/temporal-cli-v1.5.1/temporal';
const cacheDownloaded = '/home/dev/.cache/msgflow/temporal-cli-sdk-download/temporal-v1.5.1';

describe('cache location', () => {
  it('is ${MSGFLOW_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/msgflow}', () => {
    expect(msgflowCacheDir(base)).toBe('/home/dev/.cache/msgflow');
    expect(msgflowCacheDir({ ...base, XDG_CACHE_HOME: '/xdg' })).toBe('/xdg/msgflow');
    expect(msgflowCacheDir({ ...base, XDG_CACHE_HOME: '/xdg', MSGFLOW_CACHE_DIR: '/c' })).toBe('/c');
    expect(builtCliPath(base)).toBe(cacheBuilt);
    expect(downloadedCliPath(base).dest).toBe(cacheDownloaded);
  });
});

describe('findOnPath', () => {
  it('returns the first match, skipping empty and relative entries', () => {
    const fs = fakeFs('/b/temporal', '/c/temporal', 'rel/temporal');
    expect(findOnPath('temporal', 'rel::/a:/b:/c', fs)).toBe('/b/temporal');
    expect(findOnPath('temporal', '/a', fs)).toBeUndefined();
    expect(findOnPath('temporal', undefined, fs)).toBeUndefined();
  });
});

describe('planTemporalCli, in order', () => {
  const everything = fakeFs('/opt/temporal', '/usr/bin/temporal', cacheBuilt, cacheDownloaded, '/usr/bin/go');

  it('1. TEMPORAL_CLI_PATH wins over everything', () => {
    expect(planTemporalCli({ ...base, TEMPORAL_CLI_PATH: '/opt/temporal' }, everything)).toEqual({
      kind: 'use',
      path: '/opt/temporal',
      source: 'TEMPORAL_CLI_PATH',
    });
  });

  it('   ...and is an error, not skipped, when it is not executable', () => {
    expect(() => planTemporalCli({ ...base, TEMPORAL_CLI_PATH: '/nope/temporal' }, everything)).toThrow(
      new TemporalCliError('TEMPORAL_CLI_PATH=/nope/temporal is not an executable file'),
    );
  });

  it('2. then `temporal` on PATH', () => {
    expect(planTemporalCli(base, everything)).toEqual({ kind: 'use', path: '/usr/bin/temporal', source: 'PATH' });
  });

  it('3. then a copy built earlier into the cache', () => {
    const fs = fakeFs(cacheBuilt, cacheDownloaded, '/usr/bin/go');
    expect(planTemporalCli(base, fs)).toEqual({ kind: 'use', path: cacheBuilt, source: 'build cache' });
  });

  it('4. then a copy the SDK downloaded earlier', () => {
    const fs = fakeFs(cacheDownloaded, '/usr/bin/go');
    expect(planTemporalCli(base, fs)).toEqual({ kind: 'use', path: cacheDownloaded, source: 'download cache' });
  });

  it('5. then a build with Go, into the cache', () => {
    expect(planTemporalCli(base, fakeFs('/usr/bin/go'))).toEqual({
      kind: 'build',
      go: '/usr/bin/go',
      dest: cacheBuilt,
    });
  });

  it('6. and last the SDK download', () => {
    expect(planTemporalCli(base, fakeFs())).toEqual({
      kind: 'download',
      dir: '/home/dev/.cache/msgflow/temporal-cli-sdk-download',
      dest: cacheDownloaded,
    });
  });
});

describe('resolveTemporalCli', () => {
  let dir: string;
  let emptyBin: string;
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'msgflow-resolve-'));
    emptyBin = join(dir, 'bin');
    await mkdir(emptyBin);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('returns an existing CLI without building or downloading', async () => {
    const cli = join(dir, 'my-temporal');
    await writeFile(cli, '#!/bin/sh\n');
    await chmod(cli, 0o755);
    const never = () => Promise.reject(new Error('must not be called'));
    await expect(
      resolveTemporalCli({ PATH: emptyBin, HOME: dir, TEMPORAL_CLI_PATH: cli }, { build: never, download: never, log }),
    ).resolves.toBe(cli);
  });

  it('falls back to the download when the Go build fails, and explains every option when both fail', async () => {
    const go = join(dir, 'gobin', 'go');
    await mkdir(join(dir, 'gobin'));
    await writeFile(go, '#!/bin/sh\nexit 1\n');
    await chmod(go, 0o755);
    const env = { PATH: join(dir, 'gobin'), MSGFLOW_CACHE_DIR: join(dir, 'cache') };
    const calls: string[] = [];
    const error = await resolveTemporalCli(env, {
      build: async (req) => {
        calls.push(`build ${req.go} -> ${req.dest}`);
        throw new Error('proxy.golang.org: no route to host');
      },
      download: async (req) => {
        calls.push(`download -> ${req.dest}`);
        throw new Error('temporal.download: no route to host');
      },
      log,
    }).catch((e: unknown) => e);

    expect(calls).toEqual([
      `build ${go} -> ${join(dir, 'cache', 'temporal-cli-v1.5.1', 'temporal')}`,
      `download -> ${join(dir, 'cache', 'temporal-cli-sdk-download', 'temporal-v1.5.1')}`,
    ]);
    expect(error).toBeInstanceOf(TemporalCliError);
    const message = (error as Error).message;
    expect(message).toContain('go install failed: proxy.golang.org: no route to host');
    expect(message).toContain('download failed: temporal.download: no route to host');
    expect(message).toContain(
      `not found: TEMPORAL_CLI_PATH (unset), \`temporal\` on PATH, ${join(dir, 'cache', 'temporal-cli-v1.5.1', 'temporal')}, `,
    );
    for (const option of [
      'TEMPORAL_ADDRESS',
      'TEMPORAL_CLI_PATH',
      'go install github.com/temporalio/cli/cmd/temporal@v1.5.1',
      'temporal.download',
    ]) {
      expect(message).toContain(option);
    }
  });

  it('uses the download result when there is no Go', async () => {
    const env = { PATH: emptyBin, MSGFLOW_CACHE_DIR: join(dir, 'cache2') };
    await expect(
      resolveTemporalCli(env, {
        build: () => Promise.reject(new Error('must not be called without Go')),
        download: async (req) => req.dest,
        log,
      }),
    ).resolves.toBe(join(dir, 'cache2', 'temporal-cli-sdk-download', 'temporal-v1.5.1'));
  });
});

describe('checkReachable (before the SDK download, which could wait long on a network that drops packets)', () => {
  const listening = async (server: Server): Promise<string> => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  };
  const closed = async (server: Server) => new Promise((resolve) => server.close(resolve));

  it('passes when the site answers anything', async () => {
    const server = createHttpServer((_req, res) => res.writeHead(404).end());
    const url = await listening(server);
    try {
      await expect(checkReachable(url, {})).resolves.toBeUndefined();
    } finally {
      await closed(server);
    }
  });

  it('fails when nothing answers within its time, naming the site', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket)); // accepts, never answers
    const url = await listening(silent);
    try {
      await expect(checkReachable(url, {}, 300)).rejects.toThrow(`${url} cannot be reached (no answer within 300 ms)`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await closed(silent);
    }
  });

  it('fails when the site refuses, saying so; and leaves the check to the download behind a proxy', async () => {
    const server = createServer();
    const url = await listening(server);
    await closed(server);
    await expect(checkReachable(url, {})).rejects.toThrow(
      `${url} cannot be reached (ECONNREFUSED: connection refused)`,
    );
    await expect(checkReachable(url, { HTTPS_PROXY: 'http://proxy.example:3128' })).resolves.toBeUndefined();
  });
});
