/**
 * A cross-process lock held as a file created with O_EXCL, naming its holder's pid. It only saves
 * duplicate work (two CLI builds at once): correctness never depends on it, since every build writes to
 * its own temp dir and is renamed into place atomically.
 */
import { readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

export interface FileLockOptions {
  /** Called once when another live process holds the lock and we start waiting for it. */
  onWait?: (holderPid: number | undefined) => void;
  pollMs?: number;
}

/** A lock file whose content is not (yet) a pid is stale after this long: its writer died mid-write. */
const UNREADABLE_LOCK_STALE_MS = 10_000;

export async function withFileLock<T>(
  lockPath: string,
  fn: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const pollMs = options.pollMs ?? 500;
  let waiting = false;
  for (;;) {
    try {
      await writeFile(lockPath, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readHolder(lockPath);
    if (holder.stale) {
      await unlink(lockPath).catch(ignoreMissing);
      continue;
    }
    if (!waiting) options.onWait?.(holder.pid);
    waiting = true;
    await sleep(pollMs);
  }
  try {
    return await fn();
  } finally {
    await unlink(lockPath).catch(ignoreMissing);
  }
}

async function readHolder(lockPath: string): Promise<{ pid?: number; stale: boolean }> {
  let text: string;
  try {
    text = await readFile(lockPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { stale: false }; // released meanwhile: retry
    throw error;
  }
  const pid = Number.parseInt(text.trim(), 10);
  if (!Number.isInteger(pid) || pid <= 0) {
    const age = await stat(lockPath).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    return { stale: age > UNREADABLE_LOCK_STALE_MS };
  }
  return { pid, stale: !isAlive(pid) };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
