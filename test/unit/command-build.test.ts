/**
 * The build `msgflow` runs from a checkout (bin/build-cli.js) is never stale and never half-written: a changed,
 * added or removed source makes a new build, an unchanged tree reuses the last one, and commands starting together
 * all run one complete build. Real files and the real compiler, in a small tree of the checkout's shape.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILDS_DIR, freshBuild } from '../../bin/build-cli.js';

const BUILD_CLI = new URL('../../bin/build-cli.js', import.meta.url).href;
const DAY_MS = 24 * 60 * 60 * 1000;

const trees: string[] = [];
afterEach(() => {
  for (const dir of trees.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** A checkout-shaped tree: an ES module package with sources under src/ and workflows/. */
function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'msgflow-cli-build-'));
  trees.push(root);
  write(root, 'package.json', JSON.stringify({ name: 'tree', type: 'module' }));
  write(root, 'src/greeting.ts', "export const greeting: string = 'hello';\n");
  write(root, 'src/cli/main.ts', "import { greeting } from '../greeting.js';\nexport const said: string = greeting;\n");
  write(root, 'workflows/index.ts', 'export const workflows: number = 1;\n');
  return root;
}

/** What the built command module says (a fresh import: each build is a new folder). */
async function builtMain(dir: string): Promise<unknown> {
  return ((await import(pathToFileURL(join(dir, 'src/cli/main.js')).href)) as { said: unknown }).said;
}

const builds = (root: string) => readdirSync(join(root, BUILDS_DIR)).sort();

/** This process's children that are esbuild's service (Linux /proc; elsewhere none are seen). */
function esbuildChildren(): string[] {
  const tasks = `/proc/${process.pid}/task`;
  if (!existsSync(tasks)) return [];
  const children = readdirSync(tasks).flatMap((task) =>
    readFileSync(join(tasks, task, 'children'), 'utf8')
      .split(' ')
      .filter(Boolean),
  );
  return children.filter((pid) => {
    const cmdline = join('/proc', pid, 'cmdline');
    return existsSync(cmdline) && readFileSync(cmdline, 'utf8').includes('esbuild');
  });
}

describe('the build of a checkout', () => {
  it('is made once and reused while no source changes', async () => {
    const root = checkout();
    const first = await freshBuild(root);
    expect(first.built).toBe(true);
    expect(await builtMain(first.dir)).toBe('hello');

    const again = await freshBuild(root);
    expect(again).toEqual({ dir: first.dir, built: false });
    expect(builds(root)).toHaveLength(1);
  });

  it('is made again when a source changes, even keeping its size and modification time', async () => {
    const root = checkout();
    const first = await freshBuild(root);
    const source = join(root, 'src/greeting.ts');
    const { mtime } = statSync(source);
    write(root, 'src/greeting.ts', "export const greeting: string = 'howdy';\n");
    utimesSync(source, mtime, mtime);

    const second = await freshBuild(root);
    expect(second.built).toBe(true);
    expect(second.dir).not.toBe(first.dir);
    expect(await builtMain(second.dir)).toBe('howdy');
  });

  it('is made again when a source is added or removed', async () => {
    const root = checkout();
    const first = await freshBuild(root);
    write(root, 'workflows/extra.ts', 'export const extra: number = 2;\n');
    const added = await freshBuild(root);
    expect(added.built).toBe(true);
    expect(readdirSync(join(added.dir, 'workflows'))).toContain('extra.js');

    rmSync(join(root, 'workflows/index.ts'));
    const removed = await freshBuild(root);
    expect(removed.built).toBe(true);
    expect(new Set([first.dir, added.dir, removed.dir]).size).toBe(3);
    expect(readdirSync(join(removed.dir, 'workflows'))).toEqual(['extra.js', 'extra.js.map']);

    // Back to the first tree: its build is still there.
    rmSync(join(root, 'workflows/extra.ts'));
    write(root, 'workflows/index.ts', 'export const workflows: number = 1;\n');
    expect(await freshBuild(root)).toEqual({ dir: first.dir, built: false });
  });

  it('is one complete build when two starts race to make it', async () => {
    const root = checkout();
    // Both see no build and both compile before either renames its build into place.
    const [one, other] = await Promise.all([freshBuild(root), freshBuild(root)]);
    expect(one.dir).toBe(other.dir);
    expect([one.built, other.built].sort()).toEqual([false, true]);
    expect(builds(root)).toEqual([basename(one.dir)]);
    expect(await builtMain(one.dir)).toBe('hello');
    // The compiler's service stops once the last build is done, so it does not live as long as the command.
    expect(esbuildChildren()).toEqual([]);
  });

  it('serves commands started together in separate processes, leaving one build', async () => {
    const root = checkout();
    const go = join(root, 'go');
    // Each process loads the builder, says so, and waits for the word, so the builds start together.
    const script = `const { existsSync } = await import('node:fs');
      const { freshBuild } = await import(${JSON.stringify(BUILD_CLI)});
      console.log('ready');
      while (!existsSync(${JSON.stringify(go)})) await new Promise((tick) => setTimeout(tick, 5));
      console.log(JSON.stringify(await freshBuild(${JSON.stringify(root)})));`;
    const children = Array.from({ length: 3 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const results = children.map(
      (child) =>
        new Promise<{ code: number | null; out: string; err: string }>((done) => {
          let out = '';
          let err = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
          child.once('exit', (code) => done({ code, out, err }));
        }),
    );
    await Promise.all(children.map((child) => new Promise((ready) => child.stdout.once('data', ready))));
    writeFileSync(go, '');

    const finished = await Promise.all(results);
    for (const { code, err } of finished) expect({ code, err }).toEqual({ code: 0, err: '' });
    const dirs = new Set(finished.map(({ out }) => (JSON.parse(out.split('\n')[1]!) as { dir: string }).dir));
    expect(dirs.size).toBe(1);
    expect(builds(root)).toHaveLength(1);
    expect(await builtMain([...dirs][0]!)).toBe('hello');
  });

  it('removes builds not run for a day when it makes a new one', async () => {
    const root = checkout();
    const stale = (await freshBuild(root)).dir;
    const longAgo = new Date(Date.now() - 2 * DAY_MS);
    utimesSync(stale, longAgo, longAgo);
    write(root, 'src/greeting.ts', "export const greeting: string = 'hi';\n");
    const recent = (await freshBuild(root)).dir;
    write(root, 'src/greeting.ts', "export const greeting: string = 'hey';\n");
    const current = (await freshBuild(root)).dir;

    expect(builds(root)).toEqual([recent, current].map((dir) => basename(dir)).sort());
  });

  it('marks a reused build as run, so it is kept', async () => {
    const root = checkout();
    const { dir } = await freshBuild(root);
    const longAgo = new Date(Date.now() - 2 * DAY_MS);
    utimesSync(dir, longAgo, longAgo);
    await freshBuild(root);
    expect(Date.now() - statSync(dir).mtimeMs).toBeLessThan(DAY_MS);
  });
});
