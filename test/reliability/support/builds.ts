/**
 * Two builds of msgflow side by side, as a deploy meets them: the released code (a release's commit, taken from
 * git) and this checkout's code with changes a test makes (never committed). Each is a folder of its own that
 * shares this checkout's node_modules when its lockfile is the same (else it installs its own), so a worker
 * runs either with `startWorkerProcess(stack, env, { root })`.
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What a build's checkout needs to run its worker (besides node_modules). */
const RUNTIME_PATHS = ['package.json', 'package-lock.json', 'tsconfig.json', 'src', 'workflows', 'activities'];

/** One textual change to a file of a build: `find` must occur exactly once. */
export interface SourceEdit {
  file: string;
  find: string;
  replace: string;
}

/**
 * The commit of release `version`: its tag `v<version>`, else the commit whose subject is `Release <version>`
 * (a clone without tags). Fails, naming both, when this clone's history has neither.
 */
export async function releaseCommit(version: string): Promise<string> {
  const tagged = await git(['rev-parse', '--verify', '-q', `refs/tags/v${version}^{commit}`]).catch(() => '');
  if (tagged) return tagged;
  const subject = await git(['log', '-1', '--format=%H', `--grep=^Release ${version.replaceAll('.', '\\.')}$`, 'HEAD']);
  if (subject) return subject;
  throw new Error(
    `release ${version}: no tag v${version} and no commit "Release ${version}" in this clone's history ` +
      '(a shallow clone? git fetch --unshallow --tags)',
  );
}

/** The code of `commit`, extracted into `dir`. */
export async function checkoutOfCommit(commit: string, dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  await new Promise<void>((done, fail) => {
    const archive = spawn('git', ['archive', '--format=tar', commit], { stdio: ['ignore', 'pipe', 'inherit'] });
    const extract = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'inherit', 'inherit'] });
    archive.stdout.pipe(extract.stdin);
    archive.on('error', fail);
    extract.on('error', fail);
    extract.on('exit', (code) => (code === 0 ? done() : fail(new Error(`git archive ${commit} | tar: exit ${code}`))));
  });
  await installModules(dir);
}

/** This checkout's code (as it is on disk) copied into `dir`, with `edits` applied. */
export async function checkoutWithEdits(dir: string, edits: readonly SourceEdit[]): Promise<void> {
  for (const path of RUNTIME_PATHS) cpSync(path, join(dir, path), { recursive: true });
  for (const { file, find, replace } of edits) {
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    const found = text.split(find).length - 1;
    if (found !== 1) throw new Error(`edit of ${file}: expected "${find}" once, found it ${found} times`);
    writeFileSync(path, text.replace(find, replace));
  }
  await installModules(dir);
}

/** The build id the checkout in `root` runs under (what its `msgflow --version` prints). */
export async function buildIdOf(root: string): Promise<string> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const { stdout } = await run(process.execPath, ['--import', tsx, resolve(root, 'src/cli/main.ts'), '--version'], {
    cwd: root,
  });
  const buildId = /\(build ([0-9a-f]+)\)/.exec(stdout)?.[1];
  if (!buildId) throw new Error(`no build id in the --version of ${root}: ${stdout}`);
  return buildId;
}

/** This checkout's node_modules when the lockfiles match (no install needed), else `npm ci`. */
async function installModules(dir: string): Promise<void> {
  if (readFileSync(join(dir, 'package-lock.json'), 'utf8') === readFileSync('package-lock.json', 'utf8')) {
    symlinkSync(resolve('node_modules'), join(dir, 'node_modules'), 'dir');
    return;
  }
  await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 16 << 20 });
}

async function git(args: string[]): Promise<string> {
  return (await run('git', args)).stdout.trim();
}
