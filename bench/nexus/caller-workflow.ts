/**
 * Another team's workflow, as the OTP benchmark's Nexus path runs it: one Nexus operation through an endpoint,
 * its result returned. The same workflow calls msgflow's service and the benchmark's empty one (the floor), so
 * the two differ only in the handler.
 */
import { createNexusServiceClient } from '@temporalio/workflow';
import * as nexus from 'nexus-rpc';

export interface NexusCall {
  endpoint: string;
  service: string;
  operation: string;
  input: unknown;
}

export async function callNexusOperation({ endpoint, service, operation, input }: NexusCall): Promise<unknown> {
  // A definition by name: the caller needs no more than the service's and the operation's names on the wire.
  const definition = nexus.service(service, { [operation]: nexus.operation<unknown, unknown>() });
  const client = createNexusServiceClient({ endpoint, service: definition });
  return await client.executeOperation(operation, input, { scheduleToCloseTimeout: '1 minute' });
}
