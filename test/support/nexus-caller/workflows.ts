/**
 * Another team's workflow calling msgflow through its Nexus endpoint: it knows only the endpoint's name and the
 * service definition, never msgflow's namespace, task queue or keys.
 */
import { createNexusServiceClient } from '@temporalio/workflow';
import type { OperationInput, OperationKey, OperationOutput } from 'nexus-rpc';
import { type MsgflowNexusService, msgflowNexusService } from '../../../src/api/nexus-service.js';

type Operations = MsgflowNexusService['operations'];

export interface MsgflowCall<K extends OperationKey<Operations>> {
  endpoint: string;
  operation: K;
  input: OperationInput<Operations[K]>;
}

/** Runs one operation and returns its result; a failed operation fails this workflow with its failure. */
export async function callMsgflow<K extends OperationKey<Operations>>({
  endpoint,
  operation,
  input,
}: MsgflowCall<K>): Promise<OperationOutput<Operations[K]>> {
  const msgflow = createNexusServiceClient({ endpoint, service: msgflowNexusService });
  return await msgflow.executeOperation(operation, input, { scheduleToCloseTimeout: '2 minutes' });
}
