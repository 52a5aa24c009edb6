/**
 * A campaign's status whatever state its workflow is in. A running campaign answers its `progress` query;
 * one that ended without completing (failed, timed out, cancelled or terminated through Temporal) is told
 * by describe() and its failure, because its last progress still reads as it was when it stopped (e.g.
 * `preflight`). A running campaign whose step is being retried says so, with the last attempt's failure.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
// The SDK's own decoding of a failure proto (the codec, then the failure converter): a pending activity's
// last failure arrives encoded, unlike a result's failure, which the client decodes itself.
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow/index.js';
import type proto from '@temporalio/proto';
import type { CampaignProgress } from '../api/campaign-io.js';
import type { CampaignStatus } from '../api/campaign-status.js';
import type { ActivityRetry, FailureReason, FailureStatus } from '../api/failure-reason.js';
import { campaignProgressQuery } from '../definitions/campaign.js';
import { explainFailure, reasonOf } from './failures.js';

export type { CampaignStatus, CampaignStatusPhase } from '../api/campaign-status.js';

/** How long a closed campaign's progress is waited for (a worker replays it to answer). */
const CLOSED_PROGRESS_TIMEOUT_MS = 10_000;

type PendingActivity = proto.temporal.api.workflow.v1.IPendingActivityInfo;

export async function campaignStatus(client: Client, handle: WorkflowHandle): Promise<CampaignStatus> {
  const description = await handle.describe();
  const status = description.status.name;
  if (status === 'RUNNING') {
    const progress = await handle.query(campaignProgressQuery);
    const retrying = await retriesOf(client, description.raw.pendingActivities ?? []);
    return { ...progress, failure: null, retrying };
  }
  if (status === 'COMPLETED' || status === 'CONTINUED_AS_NEW') {
    return { ...(await handle.query(campaignProgressQuery)), failure: null, retrying: [] };
  }
  const failure = await handle.result().then(
    () => undefined,
    (error: unknown) => explainFailure(error),
  );
  const reason = failure ?? endedWithout(status);
  // Its last progress still tells what it did before it stopped (sent, counts, cost), when a worker answers.
  const progress = await client
    .withDeadline(Date.now() + CLOSED_PROGRESS_TIMEOUT_MS, () => handle.query(campaignProgressQuery))
    .catch(() => undefined);
  return { ...(progress ?? emptyProgress(description.startTime)), phase: reason.status, failure: reason, retrying: [] };
}

function endedWithout(status: string): FailureReason {
  const ended: FailureStatus =
    status === 'TIMED_OUT'
      ? 'timed-out'
      : status === 'TERMINATED'
        ? 'terminated'
        : status === 'CANCELLED'
          ? 'cancelled'
          : 'failed';
  return {
    status: ended,
    kind: status,
    type: status,
    message: `the campaign's workflow is ${status}`,
    nonRetryable: true,
  };
}

/** Pending activities past their first attempt, each with its last failure decoded. */
async function retriesOf(client: Client, pending: PendingActivity[]): Promise<ActivityRetry[]> {
  const converter = client.workflow.options.loadedDataConverter;
  const retried = pending.filter((activity) => (activity.attempt ?? 1) > 1 || activity.lastFailure);
  return Promise.all(
    retried.map(async (activity) => {
      const error = await decodeOptionalFailureToOptionalError(converter, activity.lastFailure).catch(() => undefined);
      return {
        activity: activity.activityType?.name ?? 'unknown',
        attempt: activity.attempt ?? 1,
        lastFailure: error ? (explainFailure(error) ?? reasonOf(error)) : null,
        nextAttemptAt: isoOf(activity.nextAttemptScheduleTime),
      };
    }),
  );
}

function isoOf(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): string | null {
  if (!ts?.seconds) return null;
  return new Date(Number(ts.seconds) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString();
}

/** A campaign that ended before any progress could be read: nothing done. */
function emptyProgress(startedAt: Date): CampaignProgress {
  return {
    phase: 'preflight',
    paused: false,
    pausedReason: null,
    cancelled: false,
    audience: { read: 0, valid: 0, invalid: 0, duplicates: 0, total: null },
    sent: 0,
    suppressed: 0,
    queued: 0,
    counts: {},
    cost: 0,
    currency: null,
    chunks: 0,
    estimate: null,
    windowOpensAt: null,
    runs: 1,
    startedAt: startedAt.toISOString(),
  };
}
