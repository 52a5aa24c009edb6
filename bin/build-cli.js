/**
 * From a checkout, `msgflow` runs JavaScript compiled from the sources instead of compiling TypeScript at each
 * start. The build is named by a hash of what it is made from (every file under src/, workflows/ and activities/,
 * tsconfig.json and the compiler), so an edit or a `git pull` leads to a new build and an unchanged tree reuses
 * the last one. A build is written to a directory of its own and renamed into place whole: two commands starting
 * together may both build, and both run a complete build.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';

/** The folders the command is compiled from, beside each other as in the published package's dist/. */
export const SOURCE_DIRS = ['src', 'workflows', 'activities'];
/** Where the builds go, under the checkout (git-ignored); one folder per source hash. */
export const BUILDS_DIR = join('.build', 'cli');
/** Raised when what a build contains changes for the same sources (compiler options below, layout). */
const BUILD_FORMAT = '1';
/** A build not run for this long, and not the current one, is removed when a new one is made. */
const UNUSED_BUILD_MS = 24 * 60 * 60 * 1000;
/** An unfinished build older than this was left by a build that died. */
const ABANDONED_BUILD_MS = 60 * 60 * 1000;

/**
 * The build of `root`'s current sources: its folder (`<folder>/src/cli/main.js` is the command) and whether this
 * call made it. Throws when the sources do not compile (esbuild has printed why).
 */
export async function freshBuild(root) {
  const hash = sourceHash(root);
  const dir = join(root, BUILDS_DIR, hash);
  if (existsSync(dir)) {
    markUsed(dir);
    return { dir, built: false };
  }
  const unfinished = join(root, BUILDS_DIR, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await compile(root, unfinished);
    // A source saved while it compiled: this build may hold it, so it must not go by the older hash.
    if (sourceHash(root) !== hash) {
      rmSync(unfinished, { recursive: true, force: true });
      return await freshBuild(root);
    }
    renameSync(unfinished, dir);
  } catch (error) {
    rmSync(unfinished, { recursive: true, force: true });
    // Another command made the same build first: its build is as good as ours.
    if (!existsSync(dir)) throw error;
    return { dir, built: false };
  }
  removeOldBuilds(root, dir);
  return { dir, built: true };
}

/** A hash of everything the build is made from: the source files (names and contents) and how they compile. */
export function sourceHash(root) {
  const compiler = esbuildPackage('esbuild/package.json').version;
  const hash = createHash('sha256').update(`msgflow-cli ${BUILD_FORMAT} esbuild ${compiler}\0`);
  const tsconfig = join(root, 'tsconfig.json');
  if (existsSync(tsconfig)) hash.update(readFileSync(tsconfig)).update('\0');
  for (const file of sourceFiles(root)) {
    const content = readFileSync(join(root, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex').slice(0, 16);
}

/** Every file under the source folders, as paths relative to `root` with `/`, sorted. */
function sourceFiles(root) {
  const files = [];
  for (const dir of SOURCE_DIRS) {
    if (!existsSync(join(root, dir))) continue;
    for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true }))
      if (entry.isFile()) files.push(relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'));
  }
  return files.sort();
}

/** Builds under way in this process. */
let compiling = 0;

/**
 * Each TypeScript file to one ES module, in the same layout (`src/cli/main.ts` → `src/cli/main.js`), so paths
 * made from `import.meta.url` (the worker's workflows, msgflow's package.json) resolve as in dist/.
 */
async function compile(root, outdir) {
  const tsconfig = join(root, 'tsconfig.json');
  const esbuild = esbuildPackage('esbuild');
  compiling += 1;
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: sourceFiles(root).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
      outdir,
      outbase: root,
      format: 'esm',
      platform: 'node',
      target: 'node22.14',
      sourcemap: true,
      logLevel: 'error',
      ...(existsSync(tsconfig) ? { tsconfig } : {}),
    });
  } finally {
    compiling -= 1;
    // esbuild's service process would otherwise live as long as the command (a worker, `msgflow dev`); it is
    // shared by the builds of this process, so the last one to finish stops it.
    if (compiling === 0) await esbuild.stop();
  }
}

/** A module of esbuild (a dev dependency, in step with the one tsx runs the tests' sources with). */
function esbuildPackage(specifier) {
  return createRequire(import.meta.url)(specifier);
}

function markUsed(dir) {
  const now = new Date();
  try {
    utimesSync(dir, now, now);
  } catch {
    // A read-only checkout: the build still runs, it is only kept no longer than others.
  }
}

/** Builds unused for a day (a command still running from one has loaded what it needs) and dead unfinished ones. */
function removeOldBuilds(root, current) {
  const builds = join(root, BUILDS_DIR);
  const now = Date.now();
  for (const name of readdirSync(builds)) {
    const dir = join(builds, name);
    if (dir === current) continue;
    const age = now - statSync(dir, { throwIfNoEntry: false })?.mtimeMs;
    try {
      if (age > (name.startsWith('.tmp-') ? ABANDONED_BUILD_MS : UNUSED_BUILD_MS))
        rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another command is removing it too; tidying up never fails a command.
    }
  }
}
