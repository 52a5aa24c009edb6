/**
 * The seeded fault run (test/reliability/support/chaos) on CI's fixed seeds: each a few minutes of faults of
 * every kind over the production topology while the workload runs, then the checker's rules (docs/reliability.md).
 * A seed's violation names the rule, the message or workflow, and the faults around it; replay it with
 * `npm run chaos -- --seed N --minutes M`. MSGFLOW_CHAOS_SEEDS (comma-separated) and MSGFLOW_CHAOS_MINUTES
 * override the set and the length.
 */
import { describe, expect, it } from 'vitest';
import { describeReport, runChaos } from './support/chaos/run.js';
import { printSummary } from './support/summary.js';

const SEEDS = (process.env.MSGFLOW_CHAOS_SEEDS ?? '1,7,37').split(',').map(Number);
const MINUTES = Number(process.env.MSGFLOW_CHAOS_MINUTES ?? 1.5);

describe('seeded fault run over the production topology', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: ${MINUTES} min of faults, every promise checked`, { timeout: 1_200_000 }, async () => {
      const report = await runChaos({
        seed,
        minutes: MINUTES,
        campaignRecipients: 200,
        log: (line) => process.stdout.write(`[chaos ${seed}] ${line}\n`),
      });
      const lines = describeReport(report);
      for (const line of lines) process.stdout.write(`[chaos ${seed}] ${line}\n`);
      printSummary('chaos', report.summary, `seed ${seed}`);
      // The run did what it says: faults applied, work done and checked.
      expect(report.faults.length).toBeGreaterThan(5);
      expect(report.check.counts.sendsChecked).toBeGreaterThan(10);
      expect(report.check.counts.campaignRecipients).toBeGreaterThan(0);
      // …the promise parts too: a retry resent, the schedule fired, the erased number was sent to before its
      // erasure, and the teams' shares were judged (enough requests in fault-free windows).
      expect(report.check.counts.retryResent).toBeGreaterThan(0);
      expect(report.check.counts.scheduledRuns).toBeGreaterThan(0);
      expect(report.check.counts.erasedCharges).toBeGreaterThan(0);
      expect(report.check.teamShares).not.toMatch(/not-judged/);
      expect(report.check.violations.map((v) => `${v.rule}: ${v.subject}: ${v.detail}`)).toEqual([]);
    });
  }
});
