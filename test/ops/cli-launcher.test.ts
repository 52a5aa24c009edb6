/**
 * The `msgflow` command as a checkout runs it: bin/msgflow.js (the package's bin, behind `npm run msgflow` and
 * `npx msgflow`) runs the compiled sources, and `--version` and `--help` load no command's module.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { parseKeyRing } from '../../src/crypto/keyring.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const LAUNCHER = join(ROOT, 'bin/msgflow.js');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** The package version and the worker's build id (a hash of the workflow code). */
const VERSION_LINE = new RegExp(`^${VERSION.replaceAll('.', '\\.')} \\(build [0-9a-f]{12}\\)\n$`);
const MINUTES = 60_000;
// A folder of its own, so no .data/dev.env of a developer's `msgflow dev` leaks in.
const cwd = mkdtempSync(join(tmpdir(), 'msgflow-launcher-'));
const imports = join(cwd, 'imports.txt');
/** The environment minus msgflow's settings and those `npm test` passes to its children (npm_config_*, …). */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|MSGFLOW_)/i.test(name)));

/** Writes the URL of every module the process imports to IMPORTS, one a line. */
const RECORD_IMPORTS = `data:text/javascript,${encodeURIComponent(`
  import { appendFileSync } from 'node:fs';
  import { registerHooks } from 'node:module';
  registerHooks({ resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    appendFileSync(process.env.IMPORTS, resolved.url + '\\n');
    return resolved;
  } });`)}`;

const msgflow = (args: string[]) => run(process.execPath, [LAUNCHER, ...args], { cwd, env });

/** The msgflow modules a run of `args` imports, as paths in the build (src/…), sorted. */
async function msgflowModulesImportedBy(args: string[]): Promise<string[]> {
  rmSync(imports, { force: true });
  await run(process.execPath, ['--import', RECORD_IMPORTS, LAUNCHER, ...args], {
    cwd,
    env: { ...env, IMPORTS: imports },
  });
  const urls = readFileSync(imports, 'utf8').trim().split('\n');
  return [...new Set(urls.flatMap((url) => /\/\.build\/cli\/[^/]+\/(.*)$/.exec(url)?.[1] ?? []))].sort();
}

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('bin/msgflow.js', () => {
  it('prints the version', { timeout: 3 * MINUTES }, async () => {
    expect((await msgflow(['--version'])).stdout).toMatch(VERSION_LINE);
  });

  it('lists every command with its description', { timeout: 3 * MINUTES }, async () => {
    const help = (await msgflow(['--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('Usage: msgflow [options] [command]');
    for (const { name, description, addOptions } of COMMANDS)
      expect(help).toContain(` ${name}${addOptions ? ' [options]' : ''} ${description} `);
  });

  it('runs a command: a new key for MSGFLOW_ENCRYPTION_KEY', { timeout: 3 * MINUTES }, async () => {
    const { stdout } = await msgflow(['codec', 'key']);
    expect(parseKeyRing(stdout.trim()).keys.size).toBe(1);
  });

  it(
    'loads no command module for --version or --help, and only its own for a command',
    {
      timeout: 3 * MINUTES,
    },
    async () => {
      const cliModules = (modules: string[]) => modules.filter((path) => path.startsWith('src/cli/'));
      // main.ts's own helpers (exit status, trace flush) import nothing else.
      const listing = [
        'src/cli/commands.js',
        'src/cli/dev-options.js',
        'src/cli/exit-status.js',
        'src/cli/flush-traces.js',
        'src/cli/main.js',
      ];
      // --version reads the workflow code for the build id (src/temporal/build-id.ts imports nothing of msgflow).
      expect(await msgflowModulesImportedBy(['--version'])).toEqual([...listing, 'src/temporal/build-id.js'].sort());
      expect(await msgflowModulesImportedBy(['--help'])).toEqual(listing);
      const codec = await msgflowModulesImportedBy(['codec', 'key']);
      expect(cliModules(codec)).toEqual(
        ['src/cli/busy-port.js', 'src/cli/codec.js', 'src/cli/common.js', 'src/cli/signals.js', ...listing].sort(),
      );
    },
  );
});

describe('the command from npm', () => {
  it('runs through `npm run msgflow --`', { timeout: 3 * MINUTES }, async () => {
    const { stdout } = await run('npm', ['run', '--silent', 'msgflow', '--', '--version'], { cwd: ROOT, env });
    expect(stdout).toMatch(VERSION_LINE);
  });

  it('runs through `npx msgflow` in the checkout', { timeout: 3 * MINUTES }, async () => {
    const { stdout } = await run('npx', ['msgflow', '--version'], { cwd: ROOT, env });
    expect(stdout).toMatch(VERSION_LINE);
  });
});
