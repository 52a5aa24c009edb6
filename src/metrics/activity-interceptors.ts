/**
 * Counts sends and charges as provider activities complete: an activity interceptor on the provider queue,
 * so every feature's charged call is counted without each activity doing it. A result that states a
 * `cost` and `currency` (the provider's send responses) is a charge; one with `messages` sent that many.
 * Counted once per completed activity: a retry that replays the provider's idempotent response completes
 * the same activity, not a second one.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { METRICS } from '../definitions/metric-names.js';

export const providerMetricsInterceptor: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const result = await next(input);
      // The context's meter already tags namespace, taskQueue and activityType.
      const activity = ctx.info.activityType;
      if (isRecord(result)) {
        if (typeof result.cost === 'number' && typeof result.currency === 'string') {
          ctx.metricMeter
            .createCounter(
              METRICS.providerCharges,
              'minor_units',
              'Money charged by the provider, in minor units of the currency',
            )
            .add(result.cost, { currency: result.currency });
        }
        if (Array.isArray(result.messages) && activity === 'sendSms') {
          ctx.metricMeter
            .createCounter(METRICS.smsSent, 'messages', 'SMS messages the provider accepted')
            .add(result.messages.length);
        }
      }
      return result;
    },
  },
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
