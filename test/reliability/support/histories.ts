/**
 * What workflow histories say about their activities: how many were scheduled, why attempts were retried,
 * and whether any failed for good. "Completed without a failed activity" means no ActivityTaskFailed /
 * ActivityTaskTimedOut event, whatever retries happened inside the attempts.
 */
import type { temporal } from '@temporalio/proto';

export interface ActivityReport {
  /** Activities scheduled. */
  scheduled: number;
  /** Activities that failed or timed out for good (their retry policy gave up or refused). */
  failed: number;
  /** Retries, by the failure type that caused them (e.g. ProviderRateLimited). */
  retriesByCause: Record<string, number>;
}

/** The activities of the given events (one history, or several concatenated). */
export function activityReport(events: temporal.api.history.v1.IHistoryEvent[]): ActivityReport {
  const report: ActivityReport = { scheduled: 0, failed: 0, retriesByCause: {} };
  for (const event of events) {
    if (event.activityTaskScheduledEventAttributes) report.scheduled++;
    if (event.activityTaskFailedEventAttributes || event.activityTaskTimedOutEventAttributes) report.failed++;
    const started = event.activityTaskStartedEventAttributes;
    if (started && (started.attempt ?? 1) > 1) {
      // Only the last failure is recorded with the started event: attempts-1 retries, the last cause known.
      const failure = started.lastFailure;
      const cause =
        failure?.applicationFailureInfo?.type ??
        (failure?.timeoutFailureInfo ? 'timeout' : (failure?.message ?? 'unknown'));
      report.retriesByCause[cause] = (report.retriesByCause[cause] ?? 0) + (started.attempt! - 1);
    }
  }
  return report;
}
