/**
 * The layer rules (.dependency-cruiser.cjs) really refuse what they are meant to: each case builds a tiny tree
 * shaped like msgflow's in a temporary directory and runs dependency-cruiser on it with the project's config.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const run = promisify(execFile);

const trees: string[] = [];
afterEach(() => {
  for (const dir of trees.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Cruises `files` (path -> source) laid out under a fresh root; returns the exit code and the report. */
async function cruise(files: Record<string, string>): Promise<{ code: number; report: string }> {
  const root = mkdtempSync(join(tmpdir(), 'msgflow-layers-'));
  trees.push(root);
  const tsconfig = { compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } };
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify(tsconfig));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  const folders = [...new Set(Object.keys(files).map((path) => path.split('/')[0]!))];
  try {
    const { stdout } = await run(process.execPath, [DEPCRUISE, '--config', CONFIG, ...folders], { cwd: root });
    return { code: 0, report: stdout };
  } catch (error) {
    const { code, stdout } = error as { code: number; stdout: string };
    return { code, report: stdout };
  }
}

const DEFINITIONS = 'export const smsWorkflowId = (key: string) => `sms:${key}`;\n';
const STARTER =
  "import { smsWorkflowId } from '../definitions/workflow-ids.js';\nexport const start = smsWorkflowId;\n";

describe('layer rules', { timeout: 60_000 }, () => {
  it('accept arrows that point down', async () => {
    const { code, report } = await cruise({
      'src/definitions/workflow-ids.ts': DEFINITIONS,
      'src/starter/index.ts': STARTER,
    });
    expect(report).toContain('no dependency violations');
    expect(code).toBe(0);
  });

  it('refuse an upward import', async () => {
    const { code, report } = await cruise({
      'src/definitions/workflow-ids.ts':
        "import { start } from '../starter/index.js';\n" + `${DEFINITIONS}export { start };\n`,
      'src/starter/index.ts': 'export const start = (key: string) => key;\n',
    });
    expect(report).toContain('definitions-are-a-leaf: src/definitions/workflow-ids.ts → src/starter/index.ts');
    expect(code).not.toBe(0);
  });

  it('refuse infrastructure reaching into a service', async () => {
    const { code, report } = await cruise({
      'src/temporal/message-signals.ts': "import { app } from '../ingress/app.js';\nexport const a = app;\n",
      'src/ingress/app.ts': 'export const app = 1;\n',
    });
    expect(report).toContain('infrastructure-stays-low: src/temporal/message-signals.ts → src/ingress/app.ts');
    expect(code).not.toBe(0);
  });

  it('refuse the starter or the ingress importing an activity module, also for a type', async () => {
    const { code, report } = await cruise({
      'src/starter/suppressions.ts':
        "import { classify } from '../../activities/audience-dedup.js';\nexport const c = classify;\n",
      'src/ingress/outcome-router.ts':
        "import type { Outcome } from '../../activities/message-store.js';\nexport type O = Outcome;\n",
      'activities/audience-dedup.ts': 'export const classify = (entry: string) => entry;\n',
      'activities/message-store.ts': 'export type Outcome = { id: string };\n',
    });
    expect(report).toContain(
      'services-do-not-import-activities: src/starter/suppressions.ts → activities/audience-dedup.ts',
    );
    expect(report).toContain(
      'services-do-not-import-activities: src/ingress/outcome-router.ts → activities/message-store.ts',
    );
    expect(code).not.toBe(0);
  });

  it('let the starter and the activities share what lies below both (src/audience)', async () => {
    const { code, report } = await cruise({
      'src/audience/dedup.ts': 'export const classify = (entry: string) => entry;\n',
      'src/starter/suppressions.ts': "import { classify } from '../audience/dedup.js';\nexport const c = classify;\n",
      'activities/audience.ts': "import { classify } from '../src/audience/dedup.js';\nexport const a = classify;\n",
    });
    expect(report).toContain('no dependency violations');
    expect(code).toBe(0);
  });

  it('refuse a circle, also of type-only imports', async () => {
    const { code, report } = await cruise({
      'src/starter/index.ts': "import type { Run } from './voice.js';\nexport type Started = { run?: Run };\n",
      'src/starter/voice.ts': "import type { Started } from './index.js';\nexport type Run = { started?: Started };\n",
    });
    expect(report).toContain('no-circular');
    expect(code).not.toBe(0);
  });

  it('refuse a Node module in workflow code, but not an activity type', async () => {
    const { code, report } = await cruise({
      'workflows/otp.ts':
        "import { randomInt } from 'node:crypto';\nimport type { Send } from '../activities/otp.js';\n" +
        'export const code = (send: Send) => send(randomInt(10));\n',
      'activities/otp.ts': 'export type Send = (n: number) => number;\n',
    });
    expect(report).toContain('workflows-import-only-workflow-safe-code: workflows/otp.ts → crypto');
    expect(report).not.toContain('activities/otp.ts');
    expect(code).not.toBe(0);
  });
});
