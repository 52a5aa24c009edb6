/**
 * The run behind one `startCampaign` Nexus operation: it follows a campaign msgflow already started and ends
 * with its summary, which Temporal delivers to the caller as the operation's result. It runs on a worker
 * without msgflow's codec (its own bundle and queue, not the workflows' registry), so its history is plain:
 * it holds the campaign's key and counts only. Cancelling it — as cancelling the caller's operation does —
 * sends the campaign's cancel update, then ends cancelled.
 */
import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { NexusCampaignActivities } from '../activities/nexus-campaign.js';
import type { CampaignSummary } from '../src/api/nexus-service.js';

const { awaitCampaignSummary } = proxyActivities<NexusCampaignActivities>({
  // A campaign may run for weeks (send windows, pauses); a lost worker is found by the missed heartbeat.
  startToCloseTimeout: '365 days',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

const { cancelCampaign } = proxyActivities<NexusCampaignActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function followCampaignForNexus({ key }: { key: string }): Promise<CampaignSummary> {
  try {
    return await awaitCampaignSummary(key);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(() => cancelCampaign(key));
    throw error;
  }
}
