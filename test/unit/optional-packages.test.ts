/** msgflow's optional peers: the list in code matches package.json, and only a missing peer becomes MissingPackageError. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importOptional, installRange, MissingPackageError, OPTIONAL_PACKAGES } from '../../src/optional-packages.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

/** What Node throws for `import('name')` when the package is not installed. */
function notFound(name: string): Error {
  return Object.assign(new Error(`Cannot find package '${name}' imported from /app/dist/src/store/index.js`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
}

describe('optional peers', () => {
  it('are the package.json peers, each optional, a dev dependency of the checkout and no plain dependency', () => {
    expect(pkg.peerDependencies).toEqual(OPTIONAL_PACKAGES);
    for (const name of Object.keys(OPTIONAL_PACKAGES)) {
      expect(pkg.peerDependenciesMeta[name]?.optional, name).toBe(true);
      // The checkout develops against one of the peer's ranges (better-sqlite3: 12.x, which Node 20 loads).
      expect(OPTIONAL_PACKAGES[name as keyof typeof OPTIONAL_PACKAGES].split(' || '), name).toContain(
        pkg.devDependencies[name],
      );
      expect(pkg.dependencies[name], name).toBeUndefined();
    }
  });

  it('a missing peer becomes a MissingPackageError naming the package, its version and the purpose', async () => {
    const failure = importOptional('pg', 'a PostgreSQL message store', () => Promise.reject(notFound('pg')));
    await expect(failure).rejects.toBeInstanceOf(MissingPackageError);
    await expect(failure).rejects.toThrow(
      `a PostgreSQL message store needs the package pg, an optional peer dependency of msgflow that is not installed: npm install pg@${OPTIONAL_PACKAGES.pg}`,
    );
  });

  it('names the range to install on the running Node: better-sqlite3 13 from Node 24 on, 12 before', () => {
    expect(installRange('better-sqlite3', '24.21.0')).toBe('^13.0.0');
    expect(installRange('better-sqlite3', '22.23.3')).toBe('^12.9.0');
    expect(installRange('better-sqlite3', '20.19.0')).toBe('^12.9.0');
    expect(installRange('pg', '24.21.0')).toBe(OPTIONAL_PACKAGES.pg);
    // Always one of the ranges package.json allows.
    for (const version of ['20.19.0', '24.0.0'])
      expect(OPTIONAL_PACKAGES['better-sqlite3'].split(' || ')).toContain(installRange('better-sqlite3', version));
  });

  it('any other failure passes unchanged: a package the peer itself misses, or a broken native build', async () => {
    const missingInside = notFound('pg-types');
    await expect(importOptional('pg', 'a store', () => Promise.reject(missingInside))).rejects.toBe(missingInside);
    const broken = new Error('better_sqlite3.node: invalid ELF header');
    await expect(importOptional('better-sqlite3', 'a store', () => Promise.reject(broken))).rejects.toBe(broken);
  });

  it('a peer that is installed loads', async () => {
    const { default: Database } = await importOptional('better-sqlite3', 'a store', () => import('better-sqlite3'));
    expect(typeof Database).toBe('function');
  });
});
