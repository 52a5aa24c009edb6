/**
 * Determinism guard: recorded histories (test/replay/histories, made by record-histories.ts from real runs; see
 * histories/README.md) must replay against the current workflow code without a non-determinism error.
 *
 * - The working histories (histories/*.json): every workflow type, run to its end by the current code.
 * - The Nexus campaign follow run's histories (histories/nexus/, made by record-nexus.ts): it is bundled apart
 *   from msgflow's workflows, and its runs move to each new build as they last as long as their campaigns.
 * - Each kept release's histories (histories/<version>/): the auto-upgrade types' runs move to a new build and
 *   replay there, so they must replay against the current code. Pinned types' runs finish on their own build:
 *   their histories are kept as evidence of the release, not replayed here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { MSGFLOW_WORKFLOW_TYPES, WORKFLOW_VERSIONING } from '../../src/definitions/versioning.js';
import { bundleNexusCampaignWorkflow } from '../../src/worker.js';
import { testWorkflowBundle } from '../support/stack.js';
import { type HistoryJson, workflowTypeOf } from './history-file.js';

const DIR = new URL('./histories/', import.meta.url);

interface Recorded {
  /** The file's path under histories/ (`0.2.0/sms-campaign-paused.json`). */
  file: string;
  type: string;
  history: HistoryJson;
}

function historiesIn(folder: string): Recorded[] {
  const dir = new URL(folder, DIR);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => {
      const history = JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as HistoryJson;
      return { file: `${folder}${f}`, type: workflowTypeOf(history), history };
    });
}

/** Replays each history with the current code; one line per failure, naming the workflow type and the file. */
async function replayFailures(recorded: Recorded[]): Promise<string[]> {
  const failures: string[] = [];
  const histories = recorded.map(({ file, history }) => ({ workflowId: file, history }));
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: await testWorkflowBundle({ versioned: true }) },
    histories,
  )) {
    if (!result.error) continue;
    const { type } = recorded.find((r) => r.file === result.workflowId)!;
    failures.push(`workflow type ${type}, history ${result.workflowId}: ${result.error.message}`);
  }
  return failures;
}

const working = historiesIn('');
const releases = readdirSync(DIR).filter((f) => /^\d+\.\d+\.\d+$/.test(f) && existsSync(new URL(`${f}/`, DIR)));
const autoUpgrade = (type: string) =>
  (WORKFLOW_VERSIONING as Record<string, { behavior: string }>)[type]?.behavior === 'AUTO_UPGRADE';

describe('workflow replay', () => {
  it('has recorded histories of every workflow type', () => {
    expect([...new Set(working.map((r) => r.type))].sort()).toEqual([...MSGFLOW_WORKFLOW_TYPES].sort());
  });

  it('replays every recorded history with the current workflow code', { timeout: 120_000 }, async () => {
    expect(await replayFailures(working)).toEqual([]);
    expect(working.length).toBeGreaterThanOrEqual(6);
  });
});

describe('the histories of every kept release', () => {
  it('keeps at least the first release', () => {
    expect(releases).toContain('0.2.0');
  });

  describe.each(releases)('%s', (release) => {
    const recorded = historiesIn(`${release}/`);

    it('covers every workflow type', () => {
      expect([...new Set(recorded.map((r) => r.type))].sort()).toEqual([...MSGFLOW_WORKFLOW_TYPES].sort());
    });

    it('replays its auto-upgrade runs with the current workflow code', { timeout: 120_000 }, async () => {
      const moving = recorded.filter((r) => autoUpgrade(r.type));
      expect(moving.length).toBeGreaterThan(0);
      expect(await replayFailures(moving)).toEqual([]);
    });
  });
});

describe('the Nexus campaign follow run', () => {
  const recorded = historiesIn('nexus/');

  it(
    'replays its recorded histories, completed and cancelled, with the current code',
    { timeout: 120_000 },
    async () => {
      expect(new Set(recorded.map((r) => r.type))).toEqual(new Set(['followCampaignForNexus']));
      expect(recorded.map((r) => r.file).sort()).toEqual([
        'nexus/follow-campaign-cancelled.json',
        'nexus/follow-campaign-completed.json',
      ]);
      const failures: string[] = [];
      const histories = recorded.map(({ file, history }) => ({ workflowId: file, history }));
      for await (const result of Worker.runReplayHistories(
        { workflowBundle: await bundleNexusCampaignWorkflow() },
        histories,
      ))
        if (result.error) failures.push(`history ${result.workflowId}: ${result.error.message}`);
      expect(failures).toEqual([]);
    },
  );
});
