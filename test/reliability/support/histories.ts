/**
 * What a workflow's history says about its activities: how many attempts each took and why they were
 * retried, and whether any failed for good. "Completed without a failed activity" means no
 * ActivityTaskFailed / ActivityTaskTimedOut event, whatever retries happened inside the attempts.
 */
import type { Client } from '@temporalio/client';

export interface ActivityReport {
  /** Activities scheduled. */
  scheduled: number;
  /** Activities that failed or timed out for good (their retry policy gave up or refused). */
  failed: number;
  /** Retries, by the failure type that caused them (e.g. ProviderRateLimited). */
  retriesByCause: Record<string, number>;
}

export async function activityReport(client: Client, workflowId: string): Promise<ActivityReport> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const report: ActivityReport = { scheduled: 0, failed: 0, retriesByCause: {} };
  for (const event of events) {
    if (event.activityTaskScheduledEventAttributes) report.scheduled++;
    if (event.activityTaskFailedEventAttributes || event.activityTaskTimedOutEventAttributes) report.failed++;
    const started = event.activityTaskStartedEventAttributes;
    if (started && (started.attempt ?? 1) > 1) {
      // Only the last failure is recorded with the started event: attempts-1 retries, the last cause known.
      const cause = started.lastFailure?.applicationFailureInfo?.type ?? started.lastFailure?.message ?? 'unknown';
      report.retriesByCause[cause] = (report.retriesByCause[cause] ?? 0) + (started.attempt! - 1);
    }
  }
  return report;
}

export function mergeReports(reports: ActivityReport[]): ActivityReport {
  const merged: ActivityReport = { scheduled: 0, failed: 0, retriesByCause: {} };
  for (const r of reports) {
    merged.scheduled += r.scheduled;
    merged.failed += r.failed;
    for (const [cause, n] of Object.entries(r.retriesByCause)) merged.retriesByCause[cause] = (merged.retriesByCause[cause] ?? 0) + n;
  }
  return merged;
}
