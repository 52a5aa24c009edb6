/**
 * Getting a Temporal CLI onto this machine: `go install` into the cache, or the Temporal SDK's download.
 * Both leave either a complete executable at `dest` or nothing: a killed build never leaves half a binary.
 */
import { mkdir, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TEMPORAL_CLI_MODULE, TEMPORAL_CLI_VERSION } from './cli-version.js';
import { importOptional } from '../optional-packages.js';
import { buildInCache, runTool } from './cache-build.js';

const BUILD_PREFIX = '.build-';

export interface BuildRequest {
  go: string;
  dest: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/** Builds the pinned CLI with `GOBIN=<temp dir> go install`, then renames it to `dest`. One build at a time. */
export async function buildTemporalCli({ go, dest, env, log }: BuildRequest): Promise<string> {
  const cacheRoot = dirname(dirname(dest));
  return buildInCache({
    cacheRoot,
    lock: join(cacheRoot, `${basename(dirname(dest))}.lock`),
    tempPrefix: BUILD_PREFIX,
    what: 'the Temporal CLI',
    log,
    alreadyBuilt: async () => ((await runs(dest)) ? dest : undefined),
    build: async (tmp) => {
      log('building Temporal CLI (first run, takes minutes)...');
      const started = Date.now();
      await runTool(go, ['install', `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`], { ...env, GOBIN: tmp });
      const built = join(tmp, 'temporal');
      if (!(await runs(built))) throw new Error(`go install produced no runnable ${built}`);
      await mkdir(dirname(dest), { recursive: true });
      await rename(built, dest);
      log(`built Temporal CLI ${TEMPORAL_CLI_VERSION} in ${Math.round((Date.now() - started) / 1000)}s: ${dest}`);
      return dest;
    },
  });
}

export interface DownloadRequest {
  dir: string;
  dest: string;
  log: (line: string) => void;
}

/**
 * Lets `@temporalio/testing` fetch the CLI from temporal.download into `dir` (it starts and stops a dev
 * server in doing so), then hands back the executable it left there.
 */
export async function downloadTemporalCli({ dir, dest, log }: DownloadRequest): Promise<string> {
  await checkReachable(TEMPORAL_DOWNLOAD_URL, process.env);
  log(`downloading Temporal CLI ${TEMPORAL_CLI_VERSION} through the Temporal SDK...`);
  await mkdir(dir, { recursive: true });
  // Imported lazily: it loads the native bridge, which nothing else on this path needs.
  const { TestWorkflowEnvironment } = await importOptional(
    '@temporalio/testing',
    'downloading the Temporal CLI (or set TEMPORAL_CLI_PATH, or put `temporal` on PATH)',
    () => import('@temporalio/testing'),
  );
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'cached-download', version: TEMPORAL_CLI_VERSION, downloadDir: dir },
      ip: '127.0.0.1',
      ui: false,
    },
  });
  await env.teardown();
  if (!(await runs(dest))) throw new Error(`the Temporal SDK's download left no runnable ${dest}`);
  return dest;
}

/** The site the Temporal SDK downloads the CLI from. */
export const TEMPORAL_DOWNLOAD_URL = 'https://temporal.download/';
const REACHABLE_TIMEOUT_MS = 8_000;
const CODE_MEANINGS: Record<string, string> = {
  ENOTFOUND: ': its host name does not resolve; no network or no DNS here?',
  EAI_AGAIN: ': its host name does not resolve; no network or no DNS here?',
  ECONNREFUSED: ': connection refused',
  ENETUNREACH: ': no route to the network',
};

/**
 * Fails within seconds when `url` does not answer (no network, a firewall that drops packets), instead of leaving
 * the SDK's download to wait on it. Any HTTP answer will do. Skipped when a proxy is configured: Node's fetch
 * would not use it, while the SDK's download does.
 */
export async function checkReachable(
  url: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = REACHABLE_TIMEOUT_MS,
): Promise<void> {
  const proxied = ['HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy'].some((name) => env[name]);
  if (proxied) return;
  try {
    const response = await fetch(url, { method: 'HEAD', redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : cause?.code
          ? `${cause.code}${CODE_MEANINGS[cause.code] ?? ''}`
          : (cause?.message ?? (error as Error).message);
    throw new Error(`${url} cannot be reached (${reason})`, { cause: error });
  }
}

/** Whether `path --version` runs and exits 0. */
export async function runs(path: string): Promise<boolean> {
  try {
    await runTool(path, ['--version'], process.env);
    return true;
  } catch {
    return false;
  }
}
