/**
 * How the outside world talks to a running campaign: the `progress` query and the `pause`, `resume` and
 * `cancel` updates (each answers with the progress after it took effect). Shared by the workflow, the
 * starter and the CLI; nothing here does I/O.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { CampaignProgress } from '../api/campaign-io.js';

export const campaignProgressQuery = defineQuery<CampaignProgress>('progress');
export interface PauseRequest {
  /** Shown in the progress as `pausedReason`. */
  reason?: string;
}

/** Stops sending further chunks until `resume`; messages already sent are still tracked. */
export const pauseCampaignUpdate = defineUpdate<CampaignProgress, [PauseRequest]>('pause');
export const resumeCampaignUpdate = defineUpdate<CampaignProgress, []>('resume');
/** Sends no further chunk; the campaign then waits for the messages already sent and reports them. */
export const cancelCampaignUpdate = defineUpdate<CampaignProgress, []>('cancel');
