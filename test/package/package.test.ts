/**
 * msgflow as another project installs it: `npm pack` (which builds through `prepack`), then the tarball
 * installed in a fresh project. First alone — what a service that only calls the provider API gets: no
 * native module, no worker SDK, no database driver, `msgflow/client` without any Temporal package — then
 * with the optional peers, where every entry point imports in plain Node (`msgflow` still without a native
 * module, the worker SDK or a driver), compiles under strict TypeScript, and the packaged stack (compiled
 * workflows bundled from the package) sends an SMS through the test run's Temporal server.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const ENTRY_POINTS = [
  'msgflow',
  'msgflow/client',
  'msgflow/worker',
  'msgflow/ingress',
  'msgflow/sandbox',
  'msgflow/testing',
  'msgflow/nexus',
];
const MINUTES = 60_000;

/** npm without the settings `npm test` passes down to its children (npm_config_*, npm_lifecycle_*…). */
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

function npm(args: string[], cwd: string) {
  return run('npm', args, { cwd, env: npmEnv, maxBuffer: 64 * 1024 * 1024 });
}

function node(args: string[], cwd: string, env: Record<string, string> = {}) {
  return run(process.execPath, args, { cwd, env: { ...npmEnv, ...env }, maxBuffer: 16 * 1024 * 1024 });
}

/** Imports `specifier` with the packages in `refused` made unimportable; its export names, or the failure. */
function importRefusing(specifier: string, refused: string[]): Promise<string> {
  return node(['--import', './refuse.mjs', 'import-entry.mjs', specifier], app, { REFUSE: refused.join(',') }).then(
    ({ stdout }) => stdout,
    (error: { stderr: string }) => `failed: ${error.stderr}`,
  );
}

/** What a light import must not pull in: the worker SDK (native bridge) and the database drivers. */
const HEAVY = ['@temporalio/worker', '@temporalio/core-bridge', '@temporalio/testing', 'better-sqlite3', 'pg'];

/** The version of a package in this checkout's install, so the temporary project's install hits the cache. */
function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;
}

/**
 * tsc's errors in the check code and in msgflow's declarations. Other packages' declarations have their own
 * (under skipLibCheck: false, @temporalio/common's lack the types of `ms`), which are not msgflow's to fix.
 */
async function typeErrors(project: string): Promise<string[]> {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const output = await node([tsc, '-p', project], app).then(
    ({ stdout }) => stdout,
    (error: { stdout: string }) => error.stdout,
  );
  return output.split('\n').filter((line) => /error TS\d+/.test(line) && !/^node_modules\/(?!msgflow\/)/.test(line));
}

function filesUnder(dir: string, match: (name: string) => boolean, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(path, match, found);
    else if (match(entry.name)) found.push(path);
  }
  return found;
}

let work: string;
let app: string;
let tarball: string;
let packedFiles: string[];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'msgflow-package-'));
  const { stdout } = await npm(['pack', '--json', '--pack-destination', work], ROOT);
  // `prepack` (the build) may print before the JSON report.
  const [report] = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  tarball = join(work, report!.filename);
  packedFiles = report!.files.map((f) => f.path);

  app = join(work, 'app');
  cpSync(join(import.meta.dirname, 'app'), app, { recursive: true });
  await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], app);
}, 10 * MINUTES);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the tarball', () => {
  it('ships the compiled code, declarations, README and LICENSE, and nothing of tests, bench, CI or scripts', () => {
    expect(packedFiles).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
    for (const entry of ['index', 'client', 'worker', 'ingress', 'sandbox', 'nexus', 'testing']) {
      expect(packedFiles).toContain(`dist/src/entry/${entry}.js`);
      expect(packedFiles).toContain(`dist/src/entry/${entry}.d.ts`);
    }
    expect(packedFiles).toContain('dist/workflows/index.js');
    expect(packedFiles).toContain('dist/src/cli/main.js');
    // The `msgflow` bin: it runs dist/ here; the builder it uses in a checkout stays out.
    expect(packedFiles).toContain('bin/msgflow.js');
    expect(packedFiles).not.toContain('bin/build-cli.js');
    const stray = packedFiles.filter(
      (path) =>
        /(^|\/)(test|bench|\.ci|scripts)\//.test(path) ||
        /\.test\.|\.reliability\./.test(path) ||
        (/\.ts$/.test(path) && !/\.d\.ts$/.test(path)) ||
        /^(Dockerfile|docker-compose|tsconfig|vitest)/.test(path),
    );
    expect(stray).toEqual([]);
  });
});

describe('a client-only install (the tarball without its optional peers)', () => {
  it('has no native module, no Temporal worker SDK and no database driver', async () => {
    const modules = join(app, 'node_modules');
    expect(filesUnder(modules, (name) => name.endsWith('.node'))).toEqual([]);
    for (const heavy of HEAVY) expect(existsSync(join(modules, heavy)), heavy).toBe(false);
    const { stdout } = await run('du', ['-sh', modules]);
    console.log(`[package] client-only install: ${stdout.trim().split(/\s+/)[0]} in node_modules`);
  });

  it('imports msgflow/client without loading any @temporalio package', async () => {
    // A resolve hook that refuses every @temporalio/* import; the control proves it bites.
    expect(await importRefusing('msgflow/client', ['@temporalio/'])).toContain('MessagingClient');
    expect(await importRefusing('msgflow', ['@temporalio/'])).toMatch(/failed: [\s\S]*refused @temporalio\//);
  });

  it('imports msgflow (facade, reports, store opener) without the optional peers', async () => {
    const names = (await node(['import-entry.mjs', 'msgflow'], app)).stdout.split('\n');
    expect(names).toEqual(expect.arrayContaining(['Msgflow', 'CampaignReports', 'openMessageStore']));
  });

  it(
    'compiles code importing msgflow and msgflow/client under strict TypeScript, without the peers',
    async () => {
      expect(await typeErrors('tsconfig.light.json')).toEqual([]);
    },
    3 * MINUTES,
  );

  it('reports a missing optional peer by name', async () => {
    const { stdout } = await node(['missing-peers.mjs'], app);
    const errors = JSON.parse(stdout) as Array<{ name: string; message: string }>;
    expect(errors).toEqual([
      { name: 'MissingPackageError', message: expect.stringContaining('npm install better-sqlite3@') },
      { name: 'MissingPackageError', message: expect.stringContaining('npm install @temporalio/worker@1.24.0') },
      { name: 'MissingPackageError', message: expect.stringContaining('npm install better-sqlite3@') },
      { name: 'MissingPackageError', message: expect.stringContaining('npm install pg@') },
    ]);
  });

  it('runs `npx msgflow --help` from the tarball', async () => {
    const { stdout } = await run('npx', ['--no-install', 'msgflow', '--help'], { cwd: app, env: npmEnv });
    expect(stdout).toContain('Usage: msgflow');
    expect(stdout).toMatch(/^\s+worker\b/m);
  });

  it('prints the package version and its build id with `npx msgflow --version`', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const { stdout } = await run('npx', ['--no-install', 'msgflow', '--version'], { cwd: app, env: npmEnv });
    expect(stdout.trim()).toMatch(new RegExp(`^${version.replaceAll('.', '\\.')} \\(build \\S+\\)$`));
  });
});

describe('with the optional peers', () => {
  beforeAll(async () => {
    // better-sqlite3 brings its binaries prebuilt, so it installs as a user's project installs it.
    const peers = ['@temporalio/worker', '@types/node', 'better-sqlite3'].map(
      (name) => `${name}@${installedVersion(name)}`,
    );
    await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...peers], app);
  }, 10 * MINUTES);

  it('imports every entry point in plain Node', async () => {
    const imported = await Promise.all(
      ENTRY_POINTS.map((entry) => node(['import-entry.mjs', entry], app).then(({ stdout }) => stdout)),
    );
    const [main, client, worker, ingress, sandbox, testing, nexus] = imported;
    expect(main).toContain('Msgflow');
    expect(client).toContain('MessagingClient');
    expect(worker).toContain('createMsgflowWorker');
    expect(ingress).toContain('createIngressApp');
    expect(sandbox).toContain('startSandbox');
    expect(testing).toContain('startStack');
    expect(nexus).toContain('msgflowNexusService');
  });

  it('imports msgflow without loading a native module, the worker SDK or a database driver', async () => {
    const native = async (specifier: string) =>
      JSON.parse((await node(['native-modules.mjs', specifier], app)).stdout) as string[];
    expect(await native('msgflow')).toEqual([]);
    // Controls: the check sees a native module when one is loaded, and the hook refuses what it names.
    expect(await native('@temporalio/worker')).toEqual([expect.stringMatching(/core-bridge\/.*\.node$/)]);
    expect(await importRefusing('msgflow', HEAVY)).toContain('Msgflow');
    expect(await importRefusing('msgflow/worker', HEAVY)).toContain('createMsgflowWorker');
    expect(await importRefusing('msgflow', ['@temporalio/client'])).toMatch(
      /failed: [\s\S]*refused @temporalio\/client/,
    );
  });

  it(
    'compiles code importing every entry point under strict TypeScript (NodeNext)',
    async () => {
      expect(await typeErrors('tsconfig.json')).toEqual([]);
    },
    3 * MINUTES,
  );

  it(
    'sends an SMS through the packaged stack, its workflows bundled from the compiled package',
    async () => {
      const { address, namespace } = inject('temporal');
      const { stdout } = await node(['send-sms.mjs', address, namespace], app);
      expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({
        workflowsPath: expect.stringMatching(/node_modules\/msgflow\/dist\/workflows\/index\.js$/),
        statuses: ['delivered'],
      });
    },
    3 * MINUTES,
  );
});
