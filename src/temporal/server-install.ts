/**
 * The Temporal server itself (not the CLI's dev server) and its SQL schema tool, for running a real cluster
 * on PostgreSQL: built once with `go install` into the user cache, beside a copy of the server module's
 * PostgreSQL schemas. The whole directory appears at once (built in a temp dir, renamed into place) or not
 * at all, so a killed build is simply started over.
 */
import { access, constants, cp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { buildInCache, runTool } from './cache-build.js';
import { findOnPath, msgflowCacheDir } from './cli.js';

/**
 * The server the cluster run and docker-compose.yml run: newer than the 1.29 the CLI v1.5.1's dev server embeds
 * (so both are tested). It has no `replace` and needs Go 1.26.8 or later; v1.32.2 needs a newer Go.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.32.1';
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';
const BUILD_PREFIX = '.server-build-';

export interface TemporalServerBinaries {
  /** `server --config-file … start` runs one node. */
  server: string;
  /** `sql --plugin postgres12 … create-database | setup-schema | update-schema`. */
  sql: string;
  /** The module's `schema/postgresql/v12` folder: `temporal/versioned` and `visibility/versioned`. */
  postgresSchema: string;
}

export class TemporalServerBuildError extends Error {
  override name = 'TemporalServerBuildError';
}

export function temporalServerDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(msgflowCacheDir(env), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

function binariesIn(dir: string): TemporalServerBinaries {
  return {
    server: join(dir, 'server'),
    sql: join(dir, 'sql'),
    postgresSchema: join(dir, 'schema', 'postgresql', 'v12'),
  };
}

/** The binaries when the cache holds them; undefined otherwise (nothing is built). */
export async function cachedTemporalServer(
  env: NodeJS.ProcessEnv = process.env,
): Promise<TemporalServerBinaries | undefined> {
  const found = binariesIn(temporalServerDir(env));
  try {
    await access(found.server, constants.X_OK);
    await access(found.sql, constants.X_OK);
    await access(join(found.postgresSchema, 'temporal', 'versioned'));
    return found;
  } catch {
    return undefined;
  }
}

export interface EnsureServerOptions {
  env?: NodeJS.ProcessEnv;
  /** Progress lines (Go's downloads, a heartbeat); stderr by default. */
  log?: (line: string) => void;
}

/** The server binaries from the cache, building them with Go on first use (minutes; one build at a time). */
export async function ensureTemporalServer(options: EnsureServerOptions = {}): Promise<TemporalServerBinaries> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const cached = await cachedTemporalServer(env);
  if (cached) return cached;
  const go = findOnPath('go', env.PATH);
  if (!go)
    throw new TemporalServerBuildError(
      `the Temporal server ${TEMPORAL_SERVER_VERSION} is not in ${temporalServerDir(env)} and Go is not on PATH to ` +
        `build it (go install ${TEMPORAL_SERVER_MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION})`,
    );
  const dest = temporalServerDir(env);
  return buildInCache({
    cacheRoot: msgflowCacheDir(env),
    lock: `${dest}.lock`,
    tempPrefix: BUILD_PREFIX,
    what: 'the Temporal server',
    log,
    alreadyBuilt: () => cachedTemporalServer(env),
    build: async (tmp) => {
      const started = Date.now();
      log(`building the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool (first run, takes minutes)...`);
      // A failed Go step is a failed server build, named as such.
      const runGo = (args: string[], progress?: (line: string) => void) =>
        runTool(go, args, { ...env, GOBIN: tmp }, progress).catch((error: unknown) => {
          throw new TemporalServerBuildError(error instanceof Error ? error.message : String(error), { cause: error });
        });
      for (const command of ['cmd/server', 'cmd/tools/sql'])
        await runGo(['install', `${TEMPORAL_SERVER_MODULE}/${command}@${TEMPORAL_SERVER_VERSION}`], log);
      // The schemas ship in the module, not in the binaries: keep a copy beside them.
      const moduleDir = JSON.parse(
        await runGo(['mod', 'download', '-json', `${TEMPORAL_SERVER_MODULE}@${TEMPORAL_SERVER_VERSION}`]),
      ) as { Dir?: string };
      if (!moduleDir.Dir) throw new TemporalServerBuildError('go mod download named no module directory');
      await cp(join(moduleDir.Dir, 'schema', 'postgresql'), join(tmp, 'schema', 'postgresql'), { recursive: true });
      await rm(dest, { recursive: true, force: true });
      await rename(tmp, dest);
      log(
        `built the Temporal server ${TEMPORAL_SERVER_VERSION} in ${Math.round((Date.now() - started) / 1000)} s: ${dest}`,
      );
      const built = await cachedTemporalServer(env);
      if (!built) throw new TemporalServerBuildError(`the build left no complete server in ${dest}`);
      return built;
    },
  });
}
