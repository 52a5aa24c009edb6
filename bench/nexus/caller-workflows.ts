/** The benchmark's caller: another team's workflow running a campaign through its team's msgflow endpoint. */
import { createNexusServiceClient } from '@temporalio/workflow';
import type { OperationInput, OperationOutput } from 'nexus-rpc';
import { type MsgflowNexusService, msgflowNexusService } from '../../src/api/nexus-service.js';

type StartCampaign = MsgflowNexusService['operations']['startCampaign'];

/** Starts the campaign and waits for its summary (the bench cancels the campaigns at its end). */
export async function runCampaignThrough(
  endpoint: string,
  input: OperationInput<StartCampaign>,
): Promise<OperationOutput<StartCampaign>> {
  const msgflow = createNexusServiceClient({ endpoint, service: msgflowNexusService });
  return await msgflow.executeOperation('startCampaign', input, { scheduleToCloseTimeout: '1 hour' });
}
