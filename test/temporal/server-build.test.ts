/**
 * `msgflow temporal ensure-server`'s build, for real but with a fake `go` (a shell script standing in for a
 * five-minute build): the binaries and the module's PostgreSQL schemas land in the cache together, a second
 * call reuses them without Go, a failed build leaves nothing behind, and a missing Go is named.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensureTemporalServer,
  TemporalServerBuildError,
  temporalServerDir,
} from '../../src/temporal/server-install.js';

const FAKE_GO = `#!/bin/sh
echo "$*" >> "$COUNT_FILE"
case "$1 $2" in
  "install go.temporal.io/server/cmd/server@v1.32.1")
    [ "$FAKE_GO_MODE" = fail ] && { echo "build failed: boom" >&2; exit 1; }
    echo "go: downloading go.temporal.io/server v1.32.1" >&2
    printf '#!/bin/sh\\necho server\\n' > "$GOBIN/server"; chmod +x "$GOBIN/server" ;;
  "install go.temporal.io/server/cmd/tools/sql@v1.32.1")
    printf '#!/bin/sh\\necho sql\\n' > "$GOBIN/sql"; chmod +x "$GOBIN/sql" ;;
  "mod download")
    mkdir -p "$FAKE_MODULE/schema/postgresql/v12/temporal/versioned" "$FAKE_MODULE/schema/postgresql/v12/visibility/versioned"
    echo "v1.0" > "$FAKE_MODULE/schema/postgresql/v12/temporal/versioned/manifest.json"
    printf '{"Path": "go.temporal.io/server", "Dir": "%s"}\\n' "$FAKE_MODULE" ;;
  *) echo "unexpected args: $*" >&2; exit 2 ;;
esac
`;

describe('ensureTemporalServer', () => {
  let dir: string;
  let bin: string;
  let countFile: string;
  const logs: string[] = [];
  const env = (extra: Record<string, string> = {}) => ({
    PATH: `${bin}:/usr/bin:/bin`,
    MSGFLOW_CACHE_DIR: join(dir, 'cache'),
    COUNT_FILE: countFile,
    FAKE_MODULE: join(dir, 'module'),
    ...extra,
  });
  const goRuns = async () => (existsSync(countFile) ? (await readFile(countFile, 'utf8')).trim().split('\n') : []);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'msgflow-server-build-'));
    bin = join(dir, 'bin');
    await mkdir(bin);
    await writeFile(join(bin, 'go'), FAKE_GO);
    await chmod(join(bin, 'go'), 0o755);
    countFile = join(dir, 'go-runs');
    logs.length = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('builds both binaries and copies the PostgreSQL schemas into one cache folder, then reuses it', async () => {
    const built = await ensureTemporalServer({ env: env(), log: (line) => logs.push(line) });
    const folder = temporalServerDir(env());
    expect(built).toEqual({
      server: join(folder, 'server'),
      sql: join(folder, 'sql'),
      postgresSchema: join(folder, 'schema', 'postgresql', 'v12'),
    });
    expect(await readFile(join(built.postgresSchema, 'temporal', 'versioned', 'manifest.json'), 'utf8')).toBe('v1.0\n');
    expect(logs[0]).toMatch(/^building the Temporal server v1\.32\.1/);
    // Go's own progress is passed on.
    expect(logs).toContain('  go: downloading go.temporal.io/server v1.32.1');
    expect(await goRuns()).toHaveLength(3);
    // Nothing but the finished folder is left in the cache.
    expect(await readdir(join(dir, 'cache'))).toEqual(['temporal-server-v1.32.1']);

    await expect(ensureTemporalServer({ env: env(), log: (line) => logs.push(line) })).resolves.toEqual(built);
    expect(await goRuns()).toHaveLength(3);
  });

  it('leaves no half-built folder when the build fails, and says why', async () => {
    const build = ensureTemporalServer({ env: env({ FAKE_GO_MODE: 'fail' }), log: (line) => logs.push(line) });
    await expect(build).rejects.toThrow(/cmd\/server@v1\.32\.1 exited with 1:[\s\S]*build failed: boom/);
    await expect(build).rejects.toBeInstanceOf(TemporalServerBuildError);
    expect(await readdir(join(dir, 'cache'))).toEqual([]);
  });

  it('names the missing Go when nothing is cached', async () => {
    await expect(
      ensureTemporalServer({ env: { ...env(), PATH: '/nonexistent' }, log: (line) => logs.push(line) }),
    ).rejects.toThrow(/Go is not on PATH[\s\S]*go install go\.temporal\.io\/server\/cmd\/server@v1\.32\.1/);
  });
});
