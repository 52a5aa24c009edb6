/**
 * Metrics workflows emit themselves, through the SDK's workflow `metricMeter`: its sink stays silent during
 * replay, so each event is counted once however often a history is replayed. Pure: safe in the bundle.
 */
import { metricMeter } from '@temporalio/workflow';
import type { MessageOutcome } from '../src/definitions/message-status.js';
import { METRICS } from '../src/definitions/metric-names.js';

/** One message's outcome became known (its message-status workflow decided it). */
export function countMessageOutcome({ status, source }: Pick<MessageOutcome, 'status' | 'source'>): void {
  metricMeter
    .createCounter(
      METRICS.messageOutcomes,
      'messages',
      'Messages whose outcome became known, by status and how it became known',
    )
    .add(1, { status, source });
}
