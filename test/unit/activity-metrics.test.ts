/**
 * The worker's provider metrics as the activity interceptor counts them, with a recording meter standing in
 * for the SDK's: messages sent by sendSms and by a campaign's chunk, charges, and each 429 refusal.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FAILURE_TYPES } from '../../src/definitions/failure-types.js';
import { METRICS } from '../../src/definitions/metric-names.js';
import { providerMetricsInterceptor } from '../../src/metrics/activity-interceptors.js';

type Execute = (input: unknown, next: (input: unknown) => Promise<unknown>) => Promise<unknown>;

function recordingContext(activityType: string) {
  const counted: Array<[string, number, Record<string, unknown> | undefined]> = [];
  const ctx = {
    info: { activityType },
    metricMeter: {
      createCounter: (name: string) => ({
        add: (value: number, tags?: Record<string, unknown>) => counted.push([name, value, tags]),
      }),
    },
  };
  const interceptors = providerMetricsInterceptor(ctx as never) as { inbound: { execute: Execute } };
  return { counted, execute: interceptors.inbound.execute };
}

describe('providerMetricsInterceptor', () => {
  it("counts a campaign chunk's messages as sent, and its charge", async () => {
    const { counted, execute } = recordingContext('sendCampaignChunk');
    await execute({}, async () => ({ cost: 9, currency: 'NGN', providerMessageIds: ['a', 'b', 'c'] }));
    expect(counted).toEqual([
      [METRICS.providerCharges, 9, { currency: 'NGN' }],
      [METRICS.smsSent, 3, undefined],
    ]);
  });

  it("counts sendSms's messages inside its `sent` answer", async () => {
    const { counted, execute } = recordingContext('sendSms');
    await execute({}, async () => ({ sent: { cost: 2, currency: 'NGN', messages: [{}, {}] }, alreadyFinal: [] }));
    expect(counted.find(([name]) => name === METRICS.smsSent)).toEqual([METRICS.smsSent, 2, undefined]);
  });

  it('counts no messages for an activity that only reads them', async () => {
    const { counted, execute } = recordingContext('getMessages');
    await execute({}, async () => ({ messages: [{}, {}] }));
    expect(counted).toEqual([]);
  });

  it('counts each attempt refused with 429 and passes the failure on', async () => {
    const { counted, execute } = recordingContext('sendCampaignChunk');
    const refused = ApplicationFailure.create({ type: FAILURE_TYPES.rateLimited, message: 'slow down' });
    await expect(execute({}, async () => Promise.reject(refused))).rejects.toBe(refused);
    const other = ApplicationFailure.create({ type: FAILURE_TYPES.validation, message: 'bad', nonRetryable: true });
    await expect(execute({}, async () => Promise.reject(other))).rejects.toBe(other);
    expect(counted).toEqual([[METRICS.providerRateLimited, 1, undefined]]);
  });
});
