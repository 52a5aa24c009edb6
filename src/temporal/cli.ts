/**
 * Finding a runnable Temporal CLI, always in this one order:
 * `TEMPORAL_CLI_PATH` → `temporal` on PATH → a copy msgflow built (or downloaded) earlier into its cache →
 * a build with `go install` when Go is available → the Temporal SDK's own download.
 * (`TEMPORAL_ADDRESS`, which makes any CLI unnecessary, comes first; see `ensureTemporal`.)
 *
 * `planTemporalCli` decides without side effects, so every step is testable without building anything;
 * `resolveTemporalCli` carries the plan out.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { parseEnv, TemporalEnv } from '../config.js';
import { buildTemporalCli, downloadTemporalCli } from './cli-install.js';
import { TEMPORAL_CLI_MODULE, TEMPORAL_CLI_VERSION } from './cli-version.js';

export { TEMPORAL_CLI_MODULE, TEMPORAL_CLI_VERSION };

export class TemporalCliError extends Error {
  override name = 'TemporalCliError';
}

export type CliPlan =
  | { kind: 'use'; path: string; source: 'TEMPORAL_CLI_PATH' | 'PATH' | 'build cache' | 'download cache' }
  | { kind: 'build'; go: string; dest: string }
  | { kind: 'download'; dir: string; dest: string };

/** The file system questions the plan asks; a test can answer them from a fake. */
export interface FsProbe {
  isExecutable(path: string): boolean;
}

export const realFs: FsProbe = {
  isExecutable(path) {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  },
};

/** `${MSGFLOW_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/msgflow}`: outside any checkout, shared by all clones. */
export function msgflowCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = parseEnv(TemporalEnv, env).MSGFLOW_CACHE_DIR;
  if (configured) return resolve(configured);
  const xdg = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : undefined;
  return join(xdg ?? join(env.HOME || homedir(), '.cache'), 'msgflow');
}

/** Where `go install` output is kept. */
export function builtCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(msgflowCacheDir(env), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/** Where the SDK's download lands (the SDK names the file `temporal-<version>`). */
export function downloadedCliPath(env: NodeJS.ProcessEnv = process.env): { dir: string; dest: string } {
  const dir = join(msgflowCacheDir(env), 'temporal-cli-sdk-download');
  return { dir, dest: join(dir, `temporal-${TEMPORAL_CLI_VERSION}`) };
}

/** The first executable called `name` on `PATH`, like `which`. */
export function findOnPath(name: string, pathVar: string | undefined, fs: FsProbe = realFs): string | undefined {
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue; // a relative PATH entry would depend on the cwd
    const candidate = join(dir, name);
    if (fs.isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function planTemporalCli(env: NodeJS.ProcessEnv = process.env, fs: FsProbe = realFs): CliPlan {
  const explicit = parseEnv(TemporalEnv, env).TEMPORAL_CLI_PATH;
  if (explicit) {
    const path = resolve(explicit);
    // An explicit setting that is wrong is an error, not a reason to silently use something else.
    if (!fs.isExecutable(path)) throw new TemporalCliError(`TEMPORAL_CLI_PATH=${path} is not an executable file`);
    return { kind: 'use', path, source: 'TEMPORAL_CLI_PATH' };
  }
  const onPath = findOnPath('temporal', env.PATH, fs);
  if (onPath) return { kind: 'use', path: onPath, source: 'PATH' };
  const built = builtCliPath(env);
  if (fs.isExecutable(built)) return { kind: 'use', path: built, source: 'build cache' };
  const downloaded = downloadedCliPath(env);
  if (fs.isExecutable(downloaded.dest)) return { kind: 'use', path: downloaded.dest, source: 'download cache' };
  const go = findOnPath('go', env.PATH, fs);
  if (go) return { kind: 'build', go, dest: built };
  return { kind: 'download', ...downloaded };
}

export interface ResolveDeps {
  build: typeof buildTemporalCli;
  download: typeof downloadTemporalCli;
  /** Progress lines (building, downloading); stderr by default so stdout stays machine-readable. */
  log: (line: string) => void;
}

const defaultDeps: ResolveDeps = {
  build: buildTemporalCli,
  download: downloadTemporalCli,
  log: (line) => process.stderr.write(`${line}\n`),
};

/** Path to a runnable Temporal CLI, building or downloading it into the cache on first use. */
export async function resolveTemporalCli(
  env: NodeJS.ProcessEnv = process.env,
  deps: Partial<ResolveDeps> = {},
): Promise<string> {
  const { build, download, log } = { ...defaultDeps, ...deps };
  const plan = planTemporalCli(env, realFs);
  if (plan.kind === 'use') return plan.path;

  const failures: string[] = [];
  if (plan.kind === 'build') {
    try {
      return await build({ go: plan.go, dest: plan.dest, env, log });
    } catch (error) {
      failures.push(`go install failed: ${messageOf(error)}`);
      log('building the Temporal CLI failed; trying the Temporal SDK download instead');
    }
  }
  const target = downloadedCliPath(env);
  try {
    return await download({ dir: target.dir, dest: target.dest, log });
  } catch (error) {
    failures.push(`download failed: ${messageOf(error)}`);
  }
  throw new TemporalCliError(noCliMessage(env, failures));
}

function noCliMessage(env: NodeJS.ProcessEnv, failures: string[]): string {
  return [
    'No Temporal CLI is available, and none could be built or downloaded:',
    `  - not found: TEMPORAL_CLI_PATH (unset), \`temporal\` on PATH, ${builtCliPath(env)}, ${downloadedCliPath(env).dest}`,
    ...failures.map((f) => `  - ${f}`),
    'Any one of these fixes it:',
    '  - set TEMPORAL_ADDRESS=host:port to use a Temporal server that is already running (nothing is started);',
    '  - set TEMPORAL_CLI_PATH to a Temporal CLI executable, or put `temporal` on PATH',
    '    (https://docs.temporal.io/cli#install);',
    `  - install Go so msgflow can build it: go install ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`,
    '    (needs access to the Go module proxy);',
    '  - allow access to https://temporal.download so the Temporal SDK can download it.',
  ].join('\n');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
