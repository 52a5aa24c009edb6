/**
 * The activities behind a `startCampaign` Nexus operation, with the campaign faked: what reaches the caller (an
 * unencrypted history) is the campaign's counts without any recipient, and a campaign that can never answer
 * ends the wait instead of retrying it.
 */
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { type CampaignsByKey, createNexusCampaignActivities } from '../../activities/nexus-campaign.js';
import type { CampaignResult } from '../../src/api/campaign-io.js';

const RESULT: CampaignResult = {
  cancelled: false,
  sent: 2,
  suppressed: 0,
  counts: { delivered: 2 },
  cost: 800,
  currency: 'NGN',
  chunks: 1,
  duplicates: 0,
  invalid: { count: 1, recipients: [{ index: 2, value: '***********78', reason: 'not a valid phone number' }] },
  notFinal: { count: 0, ids: [] },
  estimate: null,
  runs: 1,
  startedAt: '2026-11-28T10:00:00.000Z',
  completedAt: '2026-11-28T10:05:00.000Z',
};

function campaigns(result: () => Promise<CampaignResult>): CampaignsByKey & { cancelled: string[] } {
  const cancelled: string[] = [];
  return {
    cancelled,
    result,
    cancel: async (key) => void cancelled.push(key),
    failureOf: (error) =>
      error instanceof Error && error.message === 'campaign failed'
        ? { type: 'InsufficientBalance', message: 'campaign failed' }
        : undefined,
  };
}

describe('the Nexus campaign activities', () => {
  it('answer with the summary: counts, and the invalid recipients counted but not listed', async () => {
    const activities = createNexusCampaignActivities(campaigns(async () => RESULT));
    const summary = await new MockActivityEnvironment().run(activities.awaitCampaignSummary, 'spring');
    const { invalid: _invalid, ...rest } = RESULT;
    expect(summary).toEqual({ key: 'spring', ...rest, invalid: { count: 1 } });
  });

  it('end the wait for a campaign that failed, not retried; leave other errors to the retry policy', async () => {
    const failed = createNexusCampaignActivities(campaigns(() => Promise.reject(new Error('campaign failed'))));
    const error = await new MockActivityEnvironment().run(failed.awaitCampaignSummary, 'spring').catch((e) => e);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: 'InsufficientBalance', message: 'campaign failed', nonRetryable: true });

    const outage = new Error('connection refused');
    const unreachable = createNexusCampaignActivities(campaigns(() => Promise.reject(outage)));
    await expect(new MockActivityEnvironment().run(unreachable.awaitCampaignSummary, 'spring')).rejects.toBe(outage);
  });

  it('cancel the campaign by its key', async () => {
    const fake = campaigns(async () => RESULT);
    await new MockActivityEnvironment().run(createNexusCampaignActivities(fake).cancelCampaign, 'spring');
    expect(fake.cancelled).toEqual(['spring']);
  });
});
