/**
 * The worker's build id is a hash of the workflow code it bundles: the same code gives the same id wherever it
 * is installed, and a change to any module the workflows import for its value gives another.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  buildIdOf,
  relativeValueImports,
  VERSIONED_WORKFLOWS_PATH,
  workflowBuildId,
  workflowSources,
} from '../../src/temporal/build-id.js';

describe('relativeValueImports', () => {
  it('follows value imports and re-exports, and leaves out type-only ones and packages', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { T } from './types.js';",
      "import { type U, b } from '../b.js';",
      'import {',
      '  c,',
      '  d,',
      "} from './cd.js';",
      "export { e } from './e.js';",
      "export type { V } from './v.js';",
      "export * from './star.js';",
      "import * as all from './all.js';",
      "import './side-effect.js';",
      "import { proxyActivities } from '@temporalio/workflow';",
      "const s = 'from \\'./not-an-import.js\\'';",
    ].join('\n');
    expect(relativeValueImports(text)).toEqual([
      './a.js',
      '../b.js',
      './cd.js',
      './e.js',
      './star.js',
      './all.js',
      './side-effect.js',
    ]);
  });
});

describe('buildIdOf', () => {
  const sources = new Map([
    ['workflows/index.ts', "export { x } from './x.js';"],
    ['workflows/x.ts', 'export const x = 1;'],
  ]);

  it('is the same for the same code, in any order, and twelve hex digits', () => {
    const reversed = new Map([...sources].reverse());
    expect(buildIdOf(reversed, '1.24.0')).toBe(buildIdOf(sources, '1.24.0'));
    expect(buildIdOf(sources, '1.24.0')).toMatch(/^[0-9a-f]{12}$/);
  });

  it('changes with any module, a module moved, or the workflow SDK', () => {
    const id = buildIdOf(sources, '1.24.0');
    expect(buildIdOf(new Map([...sources, ['workflows/x.ts', 'export const x = 2;']]), '1.24.0')).not.toBe(id);
    expect(
      buildIdOf(
        new Map([
          ['workflows/index.ts', sources.get('workflows/index.ts')!],
          ['workflows/y.ts', 'export const x = 1;'],
        ]),
        '1.24.0',
      ),
    ).not.toBe(id);
    expect(buildIdOf(sources, '1.25.0')).not.toBe(id);
  });
});

describe('workflowSources', () => {
  const root = mkdtempSync(join(tmpdir(), 'msgflow-build-id-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  };

  it('reads the modules the entry reaches for their values, keyed from the package root', () => {
    write('workflows/index.ts', "import { a } from './a.js';\nimport type { T } from '../activities/t.js';\n");
    write('workflows/a.ts', "export { b } from '../src/definitions/b.js';\n");
    write('src/definitions/b.ts', "import { a } from '../../workflows/a.js';\nexport const b = 1;\n");
    write('activities/t.ts', 'export type T = string;\n');
    expect([...workflowSources([join(root, 'workflows/index.ts')]).keys()].sort()).toEqual([
      'src/definitions/b.ts',
      'workflows/a.ts',
      'workflows/index.ts',
    ]);
  });

  it('names a module it cannot find', () => {
    write('workflows/broken.ts', "import { gone } from './gone.js';\n");
    expect(() => workflowSources([join(root, 'workflows/broken.ts')])).toThrow(/workflow module not found: .*gone\.js/);
  });
});

describe('workflowBuildId', () => {
  it("hashes msgflow's workflow code and what it imports, not the activities it only names types of", () => {
    const modules = [...workflowSources([VERSIONED_WORKFLOWS_PATH]).keys()];
    expect(modules).toEqual(
      expect.arrayContaining([
        'workflows/versioned.ts',
        'workflows/index.ts',
        'workflows/campaign.ts',
        'src/definitions/versioning.ts',
      ]),
    );
    expect(modules.filter((path) => path.startsWith('activities/'))).toEqual([]);
    expect(workflowBuildId()).toMatch(/^[0-9a-f]{12}$/);
    expect(workflowBuildId()).toBe(workflowBuildId());
  });
});
