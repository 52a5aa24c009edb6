/** msgflow's optional peers: the list in code matches package.json, and only a missing peer becomes MissingPackageError. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importOptional, MissingPackageError, OPTIONAL_PACKAGES } from '../../src/optional-packages.js';

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
      // The checkout develops against the range it asks its users to install.
      expect(pkg.devDependencies[name], name).toBe(OPTIONAL_PACKAGES[name as keyof typeof OPTIONAL_PACKAGES]);
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
