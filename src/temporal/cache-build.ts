/**
 * Building a Go program into msgflow's user cache (the Temporal CLI, the Temporal server): one build at a
 * time across processes, in a fresh temp dir beside the destination (so the final rename is atomic), with a
 * heartbeat while Go works. A killed build leaves only a temp dir, which the next build removes.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { withFileLock } from './file-lock.js';
import { OutputTail } from './output-tail.js';

const HEARTBEAT_MS = 30_000;

export interface CacheBuild<T> {
  /** The cache folder the build's temp dir is made in. */
  cacheRoot: string;
  /** Lock file held for the whole build. */
  lock: string;
  /** Name prefix of this kind of build's temp dirs. */
  tempPrefix: string;
  /** What is built, for progress lines: `the Temporal CLI`. */
  what: string;
  log: (line: string) => void;
  /** What a process that held the lock before us has built meanwhile, if anything. */
  alreadyBuilt(): Promise<T | undefined>;
  /** Builds in `tmp` and moves the result into place; `tmp` is removed afterwards whatever happens. */
  build(tmp: string): Promise<T>;
}

export async function buildInCache<T>(job: CacheBuild<T>): Promise<T> {
  const { cacheRoot, what, log } = job;
  await mkdir(cacheRoot, { recursive: true });
  return withFileLock(
    job.lock,
    async () => {
      const built = await job.alreadyBuilt();
      if (built !== undefined) return built;
      await removeAbandonedBuilds(cacheRoot, job.tempPrefix);
      const tmp = await mkdtemp(join(cacheRoot, job.tempPrefix));
      const started = Date.now();
      const heartbeat = setInterval(
        () => log(`  still building ${what} (${Math.round((Date.now() - started) / 1000)} s)...`),
        HEARTBEAT_MS,
      );
      try {
        return await job.build(tmp);
      } finally {
        clearInterval(heartbeat);
        await rm(tmp, { recursive: true, force: true });
      }
    },
    { onWait: (pid) => log(`waiting for another process${pid ? ` (pid ${pid})` : ''} building ${what}...`) },
  );
}

/** Only builds hold the lock, so a temp dir found while holding it was left by a killed build. */
async function removeAbandonedBuilds(cacheRoot: string, prefix: string): Promise<void> {
  const entries = await readdir(cacheRoot);
  await Promise.all(
    entries.filter((e) => e.startsWith(prefix)).map((e) => rm(join(cacheRoot, e), { recursive: true, force: true })),
  );
}

/**
 * Runs a tool and resolves with its stdout. Its stderr lines (Go's `downloading …`) go to `log` when given;
 * a failure names the command and ends with the last lines it printed. Go reuses its own build and module
 * caches (GOCACHE, GOMODCACHE) across builds.
 */
export function runTool(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  log?: (line: string) => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const tail = new OutputTail(30);
    let stdout = '';
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    tail.follow(child.stdout);
    tail.follow(child.stderr, log ? (line) => log(`  ${line}`) : undefined);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${basename(command)} ${args.join(' ')} exited with ${signal ?? code}:\n${tail}`));
    });
  });
}
