/**
 * Counts sends and charges as provider activities complete, and the provider's 429s as their attempts fail:
 * an activity interceptor on the provider queue,
 * so every feature's charged call is counted without each activity doing it. A result that states a
 * `cost` and `currency` (the provider's send responses) is a charge. Messages sent are counted from the
 * results of the activities that send: `messages` of sendSms, `providerMessageIds` of a campaign's chunk. A
 * result that wraps the provider's response in `sent` (sendSms: `{ sent, alreadyFinal }`) is read inside it.
 * Counted once per completed activity: a retry that replays the provider's idempotent response completes
 * the same activity, not a second one.
 */
import { ApplicationFailure, type MetricCounter, type MetricMeter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { FAILURE_TYPES } from '../definitions/failure-types.js';
import { METRICS } from '../definitions/metric-names.js';

/** How many messages each sending activity's result says the provider accepted. */
const SENT_MESSAGES: Record<string, (response: Record<string, unknown>) => number | undefined> = {
  sendSms: (response) => (Array.isArray(response.messages) ? response.messages.length : undefined),
  sendCampaignChunk: (response) =>
    Array.isArray(response.providerMessageIds) ? response.providerMessageIds.length : undefined,
};

export const providerMetricsInterceptor: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      let result: unknown;
      try {
        result = await next(input);
      } catch (error) {
        // Each refused attempt once: the retry that follows is another execution of this interceptor.
        if (error instanceof ApplicationFailure && error.type === FAILURE_TYPES.rateLimited) {
          providerRateLimitedCounter(ctx.metricMeter).add(1);
        }
        throw error;
      }
      // The context's meter already tags namespace, taskQueue and activityType.
      const activity = ctx.info.activityType;
      const response = isRecord(result) && isRecord(result.sent) ? result.sent : result;
      if (isRecord(response)) {
        if (typeof response.cost === 'number' && typeof response.currency === 'string') {
          ctx.metricMeter
            .createCounter(
              METRICS.providerCharges,
              'minor_units',
              'Money charged by the provider, in minor units of the currency',
            )
            .add(response.cost, { currency: response.currency });
        }
        const sent = SENT_MESSAGES[activity]?.(response);
        if (sent !== undefined) {
          ctx.metricMeter.createCounter(METRICS.smsSent, 'messages', 'SMS messages the provider accepted').add(sent);
        }
      }
      return result;
    },
  },
});

/**
 * The provider's 429s. The worker runtime creates it at zero when it starts: a counter nothing has added to
 * is not exported, and the dashboard's panel would show "no data" instead of 0 on a worker that saw none.
 */
export function providerRateLimitedCounter(meter: MetricMeter): MetricCounter {
  return meter.createCounter(
    METRICS.providerRateLimited,
    'requests',
    'Provider calls refused with 429 (retried later)',
  );
}

/** OTP sends judged by the fraud guard, by verdict and reason; created at zero with the runtime too. */
export function otpGuardDecisionsCounter(meter: MetricMeter): MetricCounter {
  return meter.createCounter(METRICS.otpGuardDecisions, 'sends', 'OTP sends judged by the fraud guard');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
