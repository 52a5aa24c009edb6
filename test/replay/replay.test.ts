/**
 * Determinism guard: every recorded history (test/replay/histories, made by record-histories.ts from real
 * runs) must replay against the current workflow code without a non-determinism error.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { testWorkflowBundle } from '../support/stack.js';

const DIR = new URL('./histories/', import.meta.url);
const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

describe('workflow replay', () => {
  it('has recorded histories of every workflow type', () => {
    const types = new Set(
      files.map((f) => {
        const history = JSON.parse(readFileSync(new URL(f, DIR), 'utf8'));
        return history.events[0].workflowExecutionStartedEventAttributes.workflowType.name as string;
      }),
    );
    expect([...types].sort()).toEqual([
      'awaitMessage',
      'checkContacts',
      'followVoiceCall',
      'otpVerification',
      'sendSms',
      'smsCampaign',
      'voiceCall',
    ]);
  });

  it('replays every recorded history with the current workflow code', { timeout: 120_000 }, async () => {
    const histories = files.map((f) => ({
      workflowId: f.replace(/\.json$/, ''),
      history: JSON.parse(readFileSync(new URL(f, DIR), 'utf8')),
    }));
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories(
      { workflowBundle: await testWorkflowBundle({ versioned: true }) },
      histories,
    )) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(histories.length).toBeGreaterThanOrEqual(6);
  });
});
