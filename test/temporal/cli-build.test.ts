/**
 * The Go build path, for real but with a fake `go` (a shell script standing in for a six-minute build):
 * temp dir + atomic rename, the lock that keeps two builds from running at once, clean failure.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTemporalCli } from '../../src/temporal/cli-install.js';

/** Checks its arguments, counts its runs, then "builds" a CLI into $GOBIN (or fails, per $FAKE_GO_MODE). */
const FAKE_GO = `#!/bin/sh
[ "$1 $2" = "install github.com/temporalio/cli/cmd/temporal@v1.5.1" ] || { echo "unexpected args: $*" >&2; exit 2; }
echo run >> "$COUNT_FILE"
sleep "\${FAKE_GO_SLEEP:-0}"
case "$FAKE_GO_MODE" in
  fail) echo "go: downloading go.temporal.io/server v1.29.1" >&2; echo "build failed: boom" >&2; exit 1 ;;
  broken) printf 'not a program' > "$GOBIN/temporal"; chmod +x "$GOBIN/temporal"; exit 0 ;;
esac
printf '#!/bin/sh\\necho "temporal version fake"\\n' > "$GOBIN/temporal"
chmod +x "$GOBIN/temporal"
`;

describe('buildTemporalCli', () => {
  let dir: string;
  let go: string;
  let cache: string;
  let dest: string;
  let countFile: string;
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  const env = (extra: Record<string, string> = {}) => ({ PATH: '/usr/bin:/bin', COUNT_FILE: countFile, ...extra });
  const goRuns = async () =>
    existsSync(countFile) ? (await readFile(countFile, 'utf8')).trim().split('\n').length : 0;
  const leftovers = async () =>
    (await readdir(cache)).filter((name) => name.startsWith('.build-') || name.endsWith('.lock'));

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'msgflow-build-'));
    go = join(dir, 'go');
    await writeFile(go, FAKE_GO);
    await chmod(go, 0o755);
    cache = join(dir, 'cache');
    dest = join(cache, 'temporal-cli-v1.5.1', 'temporal');
    countFile = join(dir, 'go-runs');
    logs.length = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('builds into a temp dir, renames into place, and leaves nothing else behind', async () => {
    await expect(buildTemporalCli({ go, dest, env: env(), log })).resolves.toBe(dest);
    expect(execFileSync(dest, ['--version'], { encoding: 'utf8' })).toBe('temporal version fake\n');
    expect(logs[0]).toBe('building Temporal CLI (first run, takes minutes)...');
    expect(await goRuns()).toBe(1);
    expect(await leftovers()).toEqual([]);
  });

  it('builds once when two processes ask at the same time', async () => {
    const both = await Promise.all([
      buildTemporalCli({ go, dest, env: env({ FAKE_GO_SLEEP: '1' }), log }),
      buildTemporalCli({ go, dest, env: env({ FAKE_GO_SLEEP: '1' }), log }),
    ]);
    expect(both).toEqual([dest, dest]);
    expect(await goRuns()).toBe(1);
    expect(logs.some((line) => line.startsWith(`waiting for another process (pid ${process.pid})`))).toBe(true);
  });

  it('fails with the build output and leaves no binary when go fails', async () => {
    const error = await buildTemporalCli({ go, dest, env: env({ FAKE_GO_MODE: 'fail' }), log }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toMatch(/exited with 1:[\s\S]*build failed: boom/);
    expect(existsSync(dest)).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it('refuses a build that produced no runnable CLI', async () => {
    await expect(buildTemporalCli({ go, dest, env: env({ FAKE_GO_MODE: 'broken' }), log })).rejects.toThrow(
      /no runnable/,
    );
    expect(existsSync(dest)).toBe(false);
  });

  it('recovers from a killed build: stale lock and half-written temp dir', async () => {
    const deadPid = spawnSync('true').pid!; // has exited by now
    await mkdir(join(cache, '.build-killed'), { recursive: true });
    await writeFile(join(cache, '.build-killed', 'temporal'), 'half a binary');
    await writeFile(join(cache, 'temporal-cli-v1.5.1.lock'), `${deadPid}\n`);

    await expect(buildTemporalCli({ go, dest, env: env(), log })).resolves.toBe(dest);
    expect(await goRuns()).toBe(1);
    expect(await leftovers()).toEqual([]);
  });

  it('does not rebuild what another process finished while we waited', async () => {
    await buildTemporalCli({ go, dest, env: env(), log });
    await buildTemporalCli({ go, dest, env: env(), log });
    expect(await goRuns()).toBe(1);
  });
});
