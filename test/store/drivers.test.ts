/** Importing the store loads no database driver; opening a store loads only its own. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

it('loads better-sqlite3 and pg only when a store of their dialect is opened', () => {
  const fixture = fileURLToPath(new URL('./fixtures/loaded-drivers.ts', import.meta.url));
  const output = execFileSync(process.execPath, ['--import', 'tsx', fixture], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    encoding: 'utf8',
  });
  expect(JSON.parse(output)).toEqual({
    afterImport: { betterSqlite3: false, nativeAddon: false, pg: false },
    afterSqlite: { betterSqlite3: true, nativeAddon: true, pg: false },
    afterPostgres: { betterSqlite3: true, nativeAddon: true, pg: true },
  });
});
