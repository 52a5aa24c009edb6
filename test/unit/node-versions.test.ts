/**
 * The Node lines msgflow supports, 24 and 22 from 22.14 (better-sqlite3 13's floor), and `npm ci` refusing any
 * other before installing anything: npm treats `engines` as a warning unless `.npmrc` makes it strict.
 */
import { readFileSync } from 'node:fs';
import { satisfies } from 'semver';
import { expect, it } from 'vitest';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;

it('accepts Node 24 and 22.14 or later, and refuses Node 20 and older 22s', () => {
  for (const version of ['24.0.0', '24.21.0', '25.2.0', '22.14.0', '22.23.3'])
    expect(satisfies(version, engines), version).toBe(true);
  for (const version of ['20.19.0', '20.20.2', '22.13.1', '23.11.0'])
    expect(satisfies(version, engines), version).toBe(false);
});

it('makes npm refuse an unsupported Node (engine-strict)', () => {
  expect(read('.npmrc').split('\n')).toContain('engine-strict=true');
});
