/**
 * Campaigns for backend services: start `smsCampaign` under a business key (the same key never sends twice),
 * then follow it by key: progress, pause, resume, cancel, result. Inputs arrive validated (see Msgflow).
 */
import type { Client } from '@temporalio/client';
import type { AudienceSource, CampaignInput, CampaignProgress, CampaignResult } from '../api/campaign-io.js';
import {
  campaignProgressQuery,
  cancelCampaignUpdate,
  pauseCampaignUpdate,
  resumeCampaignUpdate,
} from '../definitions/campaign.js';
import { SA } from '../definitions/search-attributes.js';
import { campaignKeyOf, campaignWorkflowId } from '../definitions/workflow-ids.js';
import type { smsCampaign } from '../../workflows/campaign.js';
import { type CampaignStatus, campaignStatus } from './campaign-status.js';
import { startOnce } from './start-once.js';

/** A campaign, found by its key: what it has done so far, and the levers to steer it. */
export interface CampaignRun {
  key: string;
  workflowId: string;
  progress(): Promise<CampaignProgress>;
  /**
   * Its progress, or how it ended when it did not complete (`phase` failed, timed-out, cancelled or terminated,
   * with `failure` saying why), and the steps being retried after a failed attempt.
   */
  status(): Promise<CampaignStatus>;
  /** Stops sending further chunks (messages already sent are still tracked); answers with the progress after. */
  pause(reason?: string): Promise<CampaignProgress>;
  resume(): Promise<CampaignProgress>;
  /** Sends no further chunk; the campaign then waits for the messages already sent, and its result reports them. */
  cancel(): Promise<CampaignProgress>;
  /** Resolves when the campaign is over, across every continue-as-new run. */
  result(): Promise<CampaignResult>;
}

/**
 * Starts the campaign `key`, or finds it: a running or completed campaign with this key and the same input is
 * returned as it is, never started again; the key with another input throws KeyReusedError before anything is
 * sent (see start-once.ts). A campaign that failed (it fails only before sending anything, e.g. pre-flight
 * found too little balance) may be started again with its key. So may one an operator terminated or
 * cancelled through Temporal: that starts over, with new chunk idempotency keys (they hold the first run id).
 */
export async function startCampaign(
  client: Client,
  taskQueue: string,
  input: CampaignInput,
  key: string,
): Promise<CampaignRun> {
  await startOnce<typeof smsCampaign>(client, 'smsCampaign', key, {
    workflowId: campaignWorkflowId(key),
    taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: SA.kind, value: 'campaign' },
      { key: SA.campaignKey, value: key },
      { key: SA.sender, value: input.sender },
    ],
    // Shown in the Temporal UI without the codec key: never a number or the text.
    staticSummary: campaignSummary(input),
  });
  return campaignRun(client, key);
}

/** The campaign with this key (or workflow id `campaign:<key>`). */
export function campaignRun(client: Client, keyOrWorkflowId: string): CampaignRun {
  const key = campaignKeyOf(keyOrWorkflowId);
  const workflowId = campaignWorkflowId(key);
  const handle = client.workflow.getHandle<typeof smsCampaign>(workflowId);
  return {
    key,
    workflowId,
    progress: () => handle.query(campaignProgressQuery),
    status: () => campaignStatus(client, handle),
    pause: (reason) => handle.executeUpdate(pauseCampaignUpdate, { args: [{ reason }] }),
    resume: () => handle.executeUpdate(resumeCampaignUpdate),
    cancel: () => handle.executeUpdate(cancelCampaignUpdate),
    result: () => handle.result(),
  };
}

export function campaignSummary(input: CampaignInput): string {
  return `SMS campaign from ${input.sender} to ${describeAudience(input.audience)}`;
}

function describeAudience(audience: AudienceSource): string {
  switch (audience.type) {
    case 'inline':
      return `${audience.recipients.length} listed recipient(s)`;
    case 'file':
      return 'an audience file';
    case 'url':
      return 'an audience URL';
    case 'loader':
      return `audience loader "${audience.name}"`;
  }
}
