/**
 * A campaign in a 429 storm: the provider account allows 10 requests a minute while the worker's provider
 * queue is set for 600 (so the provider throttles, not Temporal). Chunk sends meet 429 and are retried
 * after Retry-After (the campaign sends one chunk at a time, so it meets about one 429 per one-minute
 * window of the provider and waits it out). The campaign must complete with no activity failed for good, every recipient
 * charged once and every state counted.
 *
 * Counted: `failedActivities` = ActivityTaskFailed + ActivityTaskTimedOut events across every run of the
 * campaign's history (the retry policy gave up); `rateLimitedRetries` = attempts beyond the first whose
 * previous attempt failed with ProviderRateLimited (expected: the storm itself, not a failure of the run).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { auditCampaign, campaignAudience, eventsOfAllRuns } from './support/campaign-audit.js';
import { activityReport } from './support/histories.js';
import { printSummary } from './support/summary.js';

const PROVIDER_LIMIT_PER_MINUTE = 10;
/** 20 chunk requests (plus pre-flight calls) against 10/min: at least three rate-limit windows. */
const CHUNKS = Number(process.env.MSGFLOW_RELIABILITY_STORM_CHUNKS ?? 20);
const CHUNK = 20;
const RECIPIENTS = CHUNKS * CHUNK;

describe('campaign in a 429 storm', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack({ ratePerMinute: 600 });
    await stack.admin.setRateLimit(stack.accountId!, PROVIDER_LIMIT_PER_MINUTE);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it(
    `completes a ${CHUNKS}-chunk campaign against a ${PROVIDER_LIMIT_PER_MINUTE}/min limit without a failed activity`,
    { timeout: 900_000 },
    async () => {
      const started = Date.now();
      const audience = campaignAudience(RECIPIENTS);
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'storm reminder',
        audience: { type: 'inline', recipients: audience },
        chunkSize: CHUNK,
      });
      const result = await run.result();
      const audit = await auditCampaign(stack, audience, result, run.workflowId);
      const activities = activityReport(await eventsOfAllRuns(stack.temporal, run.workflowId, result.runs));
      const rateLimitedRetries = activities.retriesByCause.ProviderRateLimited ?? 0;
      printSummary(
        'campaign 429 storm',
        {
          recipients: RECIPIENTS,
          chunks: result.chunks,
          providerLimitPerMinute: PROVIDER_LIMIT_PER_MINUTE,
          faults: rateLimitedRetries,
          rateLimitedRetries,
          activities: activities.scheduled,
          failedActivities: activities.failed,
          messages: audit.charges,
          lost: audit.lost,
          duplicates: audit.duplicates,
        },
        `${Math.round((Date.now() - started) / 1000)} s`,
      );

      expect(activities.failed).toBe(0);
      expect(audit).toMatchObject({ lost: 0, duplicates: 0, wrong: 0, charges: RECIPIENTS });
      expect(result).toMatchObject({ sent: RECIPIENTS, chunks: CHUNKS, duplicates: 0 });
      expect(result.counts).toEqual({ delivered: RECIPIENTS - 4, undelivered: 1, failed: 1, rejected: 1, expired: 1 });
      expect(audit.sandboxCounts).toEqual(result.counts);
      expect(audit.storeCounts).toEqual(result.counts);
      // The storm happened: more requests than a minute's budget, so some chunk send met 429 and was retried
      // (the campaign sends one chunk at a time and waits out Retry-After, so about one 429 per window).
      expect(rateLimitedRetries).toBeGreaterThanOrEqual(1);
      expect(Object.keys(activities.retriesByCause).filter((cause) => cause !== 'ProviderRateLimited')).toEqual([]);
    },
  );
});
