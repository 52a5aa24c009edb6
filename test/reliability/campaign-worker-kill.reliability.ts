/**
 * A 2,000-recipient campaign whose worker process is killed with SIGKILL three times (each time while a
 * chunk's send request is in flight when one can be caught) and replaced. The campaign must complete,
 * the provider's ledger must show every recipient charged exactly once, and every message must be
 * counted in the state the provider recorded, that state also held by the message store the workers and
 * the ingress share (a SQLite file).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { auditCampaign, campaignAudience, eventsOfAllRuns, smsCharges } from './support/campaign-audit.js';
import { waitFor } from '../support/wait-for.js';
import { activityReport } from './support/histories.js';
import { printSummary } from './support/summary.js';

const RECIPIENTS = Number(process.env.MSGFLOW_RELIABILITY_CAMPAIGN_RECIPIENTS ?? 2000);
const CHUNK = Math.max(10, Math.round(RECIPIENTS / 20));
/** Kills when this share of the audience has been charged. */
const KILL_AT = [0.15, 0.45, 0.75];
const PENDING_ACTIVITY_STATE_STARTED = 2;

describe('campaign through worker kill -9', () => {
  let stack: RunningStack;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    // The provider holds each send for 300 ms, so a kill can land while a chunk's request is in flight.
    stack = await startTestStack({ startWorker: false, sandbox: { sendLatencyMs: 300 } });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await stack?.close();
  });

  it(
    `completes a ${RECIPIENTS}-recipient campaign after its worker is killed ${KILL_AT.length} times`,
    { timeout: 1_200_000 },
    async () => {
      const started = Date.now();
      const audience = campaignAudience(RECIPIENTS);
      workers.push(startWorkerProcess(stack));
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'kill -9 reminder',
        audience: { type: 'inline', recipients: audience },
        chunkSize: CHUNK,
      });

      let killsInFlight = 0;
      for (const share of KILL_AT) {
        const after = Math.floor(RECIPIENTS * share);
        await waitFor(async () => (await smsCharges(stack)) >= after, `${after} charges`, { timeoutMs: 600_000 });
        // Prefer a kill while a chunk's send runs in the worker; after a few seconds, kill anyway.
        const inFlight = await waitFor(
          async () => {
            const { raw } = await stack.temporal.workflow.getHandle(run.workflowId).describe();
            return (raw.pendingActivities ?? []).some(
              (a) => a.activityType?.name === 'sendCampaignChunk' && a.state === PENDING_ACTIVITY_STATE_STARTED,
            );
          },
          'a chunk send in flight',
          { timeoutMs: 5_000 },
        ).then(
          () => true,
          () => false,
        );
        if (inFlight) killsInFlight++;
        await workers.at(-1)!.kill();
        workers.push(startWorkerProcess(stack));
      }

      const result = await run.result();
      const audit = await auditCampaign(stack, audience, result, run.workflowId);
      const activities = activityReport(await eventsOfAllRuns(stack.temporal, run.workflowId, result.runs));
      const retries = Object.values(activities.retriesByCause).reduce((a, b) => a + b, 0);
      printSummary(
        'campaign kill -9',
        {
          recipients: RECIPIENTS,
          chunks: result.chunks,
          faults: KILL_AT.length,
          killsWithChunkInFlight: killsInFlight,
          retriedActivities: retries,
          messages: audit.charges,
          lost: audit.lost,
          duplicates: audit.duplicates,
        },
        `${Math.round((Date.now() - started) / 1000)} s, ${result.runs} runs`,
      );

      expect(workers.slice(0, -1).every((w) => w.child.signalCode === 'SIGKILL')).toBe(true);
      expect(audit).toMatchObject({ lost: 0, duplicates: 0, wrong: 0, charges: RECIPIENTS });
      expect(result).toMatchObject({ sent: RECIPIENTS, duplicates: 0 });
      expect(result.counts).toEqual({ delivered: RECIPIENTS - 4, undelivered: 1, failed: 1, rejected: 1, expired: 1 });
      expect(audit.sandboxCounts).toEqual(result.counts);
      expect(audit.storeCounts).toEqual(result.counts);
      expect(activities.failed).toBe(0);
    },
  );
});
