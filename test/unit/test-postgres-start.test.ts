/**
 * The test PostgreSQL (test/support/postgres.ts) reports a start that cannot succeed at once, as one error that
 * names the program, the reason and the likely fix, instead of an unhandled spawn error beside a hook that waits
 * out its timeout. Stand-in programs play initdb and the server; as root they run as the `postgres` user, as the
 * real ones do.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres } from '../support/postgres.js';
import { postgresBinaries, type PostgresBinaries } from '../support/postgres-binaries.js';
import { blockedFor, PostgresStartError, serverUser } from '../support/postgres-process.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'msgflow-pg-start-'));
  await chmod(dir, 0o755); // the server's user must reach the stand-ins, as it must the real binaries
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A folder of stand-in programs: `scripts` maps a name (initdb, postgres) to a shell script and its mode. */
async function standIns(
  name: string,
  scripts: Record<string, [body: string, mode: number]>,
): Promise<PostgresBinaries> {
  const native = join(dir, name);
  await mkdir(join(native, 'bin'), { recursive: true, mode: 0o755 });
  for (const [program, [body, mode]] of Object.entries(scripts)) {
    const file = join(native, 'bin', program);
    await writeFile(file, `#!/bin/sh\n${body}\n`);
    await chmod(file, mode);
  }
  return { initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres'), native };
}

async function startFailure(binaries: PostgresBinaries): Promise<Error> {
  const error = await startPostgres({ binaries }).then(
    () => new Error('started'),
    (e: unknown) => e as Error,
  );
  expect(error).toBeInstanceOf(PostgresStartError);
  return error;
}

describe('a test PostgreSQL that cannot start', () => {
  it('names an initdb its user may not run, why, and the fix', async () => {
    const binaries = await standIns('unrunnable', { initdb: ['exit 0', 0o644] });
    const { message } = await startFailure(binaries);
    expect(message).toContain(`${binaries.initdb} could not be run as user ${(await serverUser()).name}`);
    expect(message).toContain(`EACCES (permission denied: ${binaries.initdb} is not executable for that user)`);
    expect(message).toContain('Likely fix: run `npm ci`');
  });

  it('names a missing initdb', async () => {
    const binaries = await standIns('missing', {});
    const { message } = await startFailure(binaries);
    expect(message).toContain(`${binaries.initdb} could not be run`);
    expect(message).toContain('ENOENT (no such file)');
  });

  it('names an initdb that fails, with its output', async () => {
    const binaries = await standIns('failing-initdb', { initdb: ['echo "initdb: disk full" >&2; exit 3', 0o755] });
    const { message } = await startFailure(binaries);
    expect(message).toContain(`initdb (${binaries.initdb}) exited with code 3`);
    expect(message).toContain('initdb: disk full');
  });

  it('names a server that ends before accepting connections, with its port and output', async () => {
    const binaries = await standIns('failing-server', {
      initdb: ['exit 0', 0o755],
      postgres: ['echo "FATAL: could not bind" >&2; exit 1', 0o755],
    });
    const { message } = await startFailure(binaries);
    expect(message).toMatch(/exited with code 1 before accepting connections on 127\.0\.0\.1:\d+/);
    expect(message).toContain(binaries.postgres);
    expect(message).toContain('FATAL: could not bind');
  });
});

describe('blockedFor', () => {
  it('finds the folder on the path that a user may not enter', async () => {
    const closed = join(dir, 'closed');
    await mkdir(join(closed, 'bin'), { recursive: true });
    await chmod(closed, 0o700);
    const program = join(closed, 'bin', 'initdb');
    await writeFile(program, '');
    await chmod(program, 0o755);
    const me = userInfo();
    const stranger = { name: 'stranger', uid: me.uid + 4242, gid: me.gid + 4242, groups: [] };
    await expect(blockedFor(program, stranger)).resolves.toBe(closed);
    await chmod(closed, 0o755);
    await expect(blockedFor(program, stranger)).resolves.toBeUndefined();
  });
});

describe('the real binaries', () => {
  it('are where the server’s user can run them, wherever the checkout lives', async () => {
    const binaries = await postgresBinaries();
    const user = await serverUser();
    await expect(blockedFor(binaries.initdb, user)).resolves.toBeUndefined();
    await expect(blockedFor(binaries.postgres, user)).resolves.toBeUndefined();
  });
});
