/**
 * What a workflow history says about its activity calls, whether they ran on a task queue (ActivityTaskStarted
 * events) or as local activities (the SDK's `core_local_activity` markers, recorded once a call completes).
 */
import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface ActivityCall {
  activityType: string;
  /** The attempt that completed (local) or started (queued). */
  attempt: number;
}

export function activityCalls(events: readonly HistoryEvent[], activityType?: string): ActivityCall[] {
  const typeOfScheduled = new Map<string, string>();
  const calls: ActivityCall[] = [];
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) typeOfScheduled.set(String(event.eventId), scheduled.activityType?.name ?? '');
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const type = typeOfScheduled.get(String(started.scheduledEventId)) ?? '';
      calls.push({ activityType: type, attempt: started.attempt ?? 1 });
    }
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = marker.details?.data?.payloads?.[0]?.data;
      const parsed = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>) : {};
      calls.push({ activityType: String(parsed.activity_type), attempt: Number(parsed.attempt ?? 1) });
    }
  }
  return activityType === undefined ? calls : calls.filter((c) => c.activityType === activityType);
}

/** The build of every completed workflow task in a history, in order (versioned workers only). */
export function buildsOfTasks(events: readonly HistoryEvent[]): string[] {
  return events.flatMap((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId ?? []);
}
