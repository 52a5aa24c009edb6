/**
 * The campaign operations of the `msgflow` Nexus service (src/api/nexus-service.ts).
 *
 * `startCampaign` is asynchronous: a campaign runs for hours or days. Its handler starts the campaign through
 * the facade (msgflow's client: the campaign's input, numbers and text, stays encrypted in msgflow's history),
 * then backs the operation with a small run, `followCampaignForNexus`, on a queue whose worker has no codec:
 * Temporal delivers that run's result (the campaign's counts) or failure to the caller as it is, readable
 * without msgflow's key. Its input is the campaign's key only. Cancelling the operation cancels that run, which
 * sends the campaign's cancel update (workflows/nexus-campaign.ts).
 *
 * `campaignStatus` is synchronous: a read of the campaign's progress, or how it ended.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import * as nexus from 'nexus-rpc';
import { CampaignKey, StartCampaignRequest } from '../api/campaign-io.js';
import type { CampaignStatus } from '../api/campaign-status.js';
import type { CampaignStatusRequest, CampaignSummary } from '../api/nexus-service.js';
import { nexusCampaignWorkflowId } from '../definitions/workflow-ids.js';
import type { Msgflow } from './index.js';
import { answering } from './nexus-errors.js';
import { withNexusLinks } from './nexus-links.js';
import { forTeam } from './nexus-team.js';
import { validate } from './validate.js';

/** The workflow type backing a `startCampaign` operation (workflows/nexus-campaign.ts). */
export const NEXUS_CAMPAIGN_WORKFLOW = 'followCampaignForNexus';

/**
 * `startCampaign`: the campaign started once per key for `team` (the endpoint's: src/starter/nexus-team.ts),
 * followed by a plain run on `followQueue`.
 */
export function startCampaignOperation(
  msgflow: Msgflow,
  followQueue: string,
  team: string,
): nexus.OperationHandler<StartCampaignRequest, CampaignSummary> {
  return new WorkflowRunOperationHandler<StartCampaignRequest, CampaignSummary>((ctx, request) =>
    answering(async () => {
      const { key, campaign } = validate(StartCampaignRequest, request, 'Invalid campaign');
      // Without a key, the request's id (the same on every retry of this start) makes it one campaign.
      const run = await withNexusLinks(ctx, () =>
        msgflow.startCampaign(forTeam(campaign, team, 'Invalid campaign'), { key: key ?? `nexus-${ctx.requestId}` }),
      );
      return await startWorkflow<(args: { key: string }) => Promise<CampaignSummary>>(ctx, NEXUS_CAMPAIGN_WORKFLOW, {
        workflowId: nexusCampaignWorkflowId(run.key, ctx.requestId),
        taskQueue: followQueue,
        args: [{ key: run.key }],
        // Readable without any key: the campaign's key, never a number or the text.
        staticSummary: `Follows campaign ${run.key} for a Nexus caller`,
      });
    }),
  );
}

/** `campaignStatus`: the facade's status of the campaign with this key; NOT_FOUND when there is none. */
export async function campaignStatusOperation(
  msgflow: Msgflow,
  request: CampaignStatusRequest,
): Promise<CampaignStatus> {
  return answering(async () => {
    const key = validate(CampaignKey, request?.key, 'Invalid campaign key');
    try {
      return await msgflow.campaign(key).status();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError)
        throw new nexus.HandlerError('NOT_FOUND', `no campaign has the key "${key}"`, { cause: error });
      throw error;
    }
  });
}
