/**
 * A 5,000-recipient campaign read from a CSV file, on the real stack: exact per-state counts matching the
 * sandbox's records, nobody charged twice, and every run's history under the bound (the campaign continues
 * as new on the way). The one large test of the suite: the rest use small campaigns.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_STATUSES } from '../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';

const RECIPIENTS = 5000;
/**
 * Temporal suggests continuing as new at 4,096 events; a campaign run closes at its threshold plus what
 * arrives while its last activity completes, well under that.
 */
const HISTORY_BOUND = 4096;
/**
 * Outcomes arrive many per signal and no workflow runs per message, so 5,000 recipients fit in one run at
 * the default threshold: a low one makes this campaign continue as new several times on the way.
 */
const MAX_EVENTS_PER_RUN = 200;

describe('a campaign at scale', () => {
  let stack: RunningStack;
  const dir = mkdtempSync(join(tmpdir(), 'campaign-scale-'));
  beforeAll(async () => {
    stack = await startTestStack({ initialBalance: 1_000_000 });
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    `sends ${RECIPIENTS} recipients exactly once each and counts every state exactly`,
    { timeout: 1_200_000 },
    async () => {
      const magic = [...FINAL_STATUSES.map((s) => MAGIC_NUMBERS[s]), MAGIC_NUMBERS.neverFinal];
      const plain = Array.from({ length: RECIPIENTS - magic.length }, (_, i) => `+234 80${String(10_000_000 + i)}`);
      const valid = [...magic, ...plain];
      const rows = valid.map((phone, i) => `${i},"${phone}",due`);
      // Twenty repeats (written without spaces) and ten unreadable entries, spread through the file.
      for (let i = 0; i < 20; i++) rows.splice(250 * i + 7, 0, `dup${i},${plain[i * 100]!.replace(/\s/g, '')},due`);
      for (let i = 0; i < 10; i++) rows.splice(500 * i + 3, 0, `bad${i},not-a-number-${i},due`);
      const path = join(dir, 'due.csv');
      writeFileSync(path, `customer,phone,state\n${rows.join('\n')}\n`);

      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'Your payment is due this week',
        audience: { type: 'file', path },
        chunkSize: 100,
        maxOutstanding: 1000,
        maxEventsPerRun: MAX_EVENTS_PER_RUN,
        // Long enough for every delivered message's webhook under load; the never-final number waits it out.
        waitWindowMs: 90_000,
      });
      const result = await run.result();

      expect(result).toMatchObject({
        sent: RECIPIENTS,
        duplicates: 20,
        invalid: { count: 10 },
        notFinal: { count: 1 },
      });
      expect(result.counts).toEqual({
        delivered: RECIPIENTS - 5,
        undelivered: 1,
        failed: 1,
        rejected: 1,
        expired: 1,
        sent: 1,
      });
      expect(result.estimate).toMatchObject({ recipients: RECIPIENTS, cost: result.cost });

      // The sandbox's records agree, state by state, and each recipient was charged exactly once.
      const sandbox: Record<string, number> = {};
      for await (const m of stack.messaging.messages.list({ perPage: 200 }))
        sandbox[m.status] = (sandbox[m.status] ?? 0) + 1;
      expect(sandbox).toEqual(result.counts);
      const charges = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms');
      expect(charges).toHaveLength(RECIPIENTS);
      expect(new Set(charges.map((c) => c.recipient)).size).toBe(RECIPIENTS);
      expect(charges.reduce((sum, c) => sum + c.amount, 0)).toBe(result.cost);

      // It continued as new, and no run's history passed the bound.
      expect(result.runs).toBeGreaterThan(1);
      let runIds: string[] = [];
      // Visibility is eventually consistent: the last runs may take a moment to be listed.
      for (let attempt = 0; attempt < 100 && runIds.length < result.runs; attempt++) {
        if (attempt) await new Promise((r) => setTimeout(r, 200));
        runIds = [];
        for await (const execution of stack.temporal.workflow.list({ query: `WorkflowId = '${run.workflowId}'` }))
          runIds.push(execution.runId);
      }
      expect(runIds.length).toBe(result.runs);
      const lengths = await Promise.all(
        runIds.map(
          async (runId) =>
            ((await stack.temporal.workflow.getHandle(run.workflowId, runId).fetchHistory()).events ?? []).length,
        ),
      );
      console.log(
        `campaign of ${RECIPIENTS}: ${result.runs} runs, history lengths ${lengths.join(', ')} (threshold ${MAX_EVENTS_PER_RUN})`,
      );
      expect(Math.max(...lengths)).toBeLessThanOrEqual(HISTORY_BOUND);
    },
  );
});
