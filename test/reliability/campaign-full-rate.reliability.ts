/**
 * The provider's limit used in full: a campaign of one request per recipient (every text distinct) at the
 * sandbox's real 120 requests/minute, sent by 3 `msgflow worker` processes sharing the provider queue's
 * server-enforced rate. Asserted: no request met a 429 (no attempt of any provider activity was retried for
 * ProviderRateLimited), every recipient charged once and every state counted exactly (campaign result,
 * provider, message store). Printed, not asserted (timing on a shared machine): the achieved request rate
 * as a fraction of the limit, from the provider's own message times.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { auditCampaign, campaignAudience, eventsOfAllRuns } from './support/campaign-audit.js';
import { activityReport } from './support/histories.js';
import { printSummary } from './support/summary.js';

const LIMIT_PER_MINUTE = 120;
const WORKERS = 3;
/** 600 requests: five minutes at the limit. */
const RECIPIENTS = Number(process.env.MSGFLOW_RELIABILITY_FULL_RATE_RECIPIENTS ?? 600);

describe('campaign at the provider limit', () => {
  let stack: RunningStack;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    stack = await startTestStack({ startWorker: false, ratePerMinute: LIMIT_PER_MINUTE });
    for (let i = 0; i < WORKERS; i++)
      workers.push(startWorkerProcess(stack, { MSGFLOW_RATE_LIMIT_PER_MINUTE: String(LIMIT_PER_MINUTE) }));
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await stack?.close();
  });

  it(
    `sends ${RECIPIENTS} single-recipient requests at ${LIMIT_PER_MINUTE}/min with ${WORKERS} worker processes and no 429`,
    { timeout: 900_000 },
    async () => {
      const started = Date.now();
      const audience = campaignAudience(RECIPIENTS);
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'Your appointment is tomorrow at 10:00.',
        audience: { type: 'inline', recipients: audience },
        chunkSize: 1,
      });
      const result = await run.result();
      const audit = await auditCampaign(stack, audience, result, run.workflowId);
      const activities = activityReport(await eventsOfAllRuns(stack.temporal, run.workflowId, result.runs));
      const rateLimited = activities.retriesByCause.ProviderRateLimited ?? 0;
      const sendTimes = (await sendRequestTimes(stack)).sort((a, b) => a - b);
      const perMinute = (60_000 * (sendTimes.length - 1)) / (sendTimes.at(-1)! - sendTimes[0]!);
      printSummary(
        'campaign at the provider limit',
        {
          recipients: RECIPIENTS,
          requests: sendTimes.length,
          workers: WORKERS,
          limitPerMinute: LIMIT_PER_MINUTE,
          achievedPerMinute: Math.round(perMinute * 10) / 10,
          ofLimit: `${Math.round((1000 * perMinute) / LIMIT_PER_MINUTE) / 10}%`,
          rateLimited,
          messages: audit.charges,
          lost: audit.lost,
          duplicates: audit.duplicates,
        },
        `${Math.round((Date.now() - started) / 1000)} s, ${result.runs} runs`,
      );

      expect(workers.every((w) => w.child.exitCode === null)).toBe(true);
      expect(rateLimited).toBe(0);
      expect(activities.failed).toBe(0);
      expect(Object.keys(activities.retriesByCause)).toEqual([]);
      expect(sendTimes).toHaveLength(RECIPIENTS);
      expect(audit).toMatchObject({ lost: 0, duplicates: 0, wrong: 0, charges: RECIPIENTS });
      expect(result).toMatchObject({ sent: RECIPIENTS, chunks: RECIPIENTS, duplicates: 0 });
      expect(result.counts).toEqual({ delivered: RECIPIENTS - 4, undelivered: 1, failed: 1, rejected: 1, expired: 1 });
      expect(audit.sandboxCounts).toEqual(result.counts);
      expect(audit.storeCounts).toEqual(result.counts);
    },
  );
});

/** When the provider accepted each message (one per request here), in ms since the epoch. */
async function sendRequestTimes(stack: RunningStack): Promise<number[]> {
  const times: number[] = [];
  for await (const message of stack.messaging.messages.list({ perPage: 200 }))
    times.push(Date.parse(message.created_at));
  return times;
}
