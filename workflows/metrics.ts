/**
 * Metrics workflows emit themselves, through the SDK's workflow `metricMeter`: its sink stays silent during
 * replay, so each event is counted once however often a history is replayed. Pure: safe in the bundle.
 */
import { metricMeter } from '@temporalio/workflow';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';
import { METRICS, OTP_CHANNEL_ATTEMPTS_COUNTER } from '../src/definitions/metric-names.js';

/** Outcomes a workflow accepted for its messages (each message counted once, by the workflow that sent it). */
export function countMessageOutcomes(outcomes: ReadonlyArray<Pick<MessageOutcome, 'status' | 'source'>>): void {
  if (outcomes.length === 0) return;
  const counter = metricMeter.createCounter(
    METRICS.messageOutcomes,
    'messages',
    'Messages whose outcome became known, by status and how it became known',
  );
  // One sink call per kind, not per message: each call crosses from the workflow thread with a copy of the
  // workflow's info, so a signal of a thousand outcomes would otherwise cost a thousand of them.
  const kinds = new Map<string, { status: string; source: string; count: number }>();
  for (const { status, source } of outcomes) {
    const key = `${status}\n${source}`;
    const kind = kinds.get(key) ?? { status, source, count: 0 };
    kind.count += 1;
    kinds.set(key, kind);
  }
  for (const { status, source, count } of kinds.values()) counter.add(count, { status, source });
}

/** One delivery of an OTP code, by channel and outcome (a text when its final status is heard, or at the session's end). */
export function countOtpChannelAttempt(channel: string, outcome: string): void {
  const { name, unit, description } = OTP_CHANNEL_ATTEMPTS_COUNTER;
  metricMeter.createCounter(name, unit, description).add(1, { channel, outcome });
}
