/**
 * The Nexus floor's service: msgflow's OTP operation names, each answering its input at once. Served by the
 * floor's worker (bench/floor/worker.ts) in msgflow's namespace, on a queue of its own.
 */
import * as nexus from 'nexus-rpc';

export const EMPTY_SERVICE_NAME = 'benchEmpty';

const emptyService = nexus.service(EMPTY_SERVICE_NAME, {
  sendOtp: nexus.operation<unknown, unknown>(),
  verifyOtp: nexus.operation<unknown, unknown>(),
});

export const emptyServiceHandler = nexus.serviceHandler(emptyService, {
  sendOtp: async (_ctx, input) => input,
  verifyOtp: async (_ctx, input) => input,
});

/** The floor's Nexus queue beside its workflow queue. */
export function floorNexusQueue(workflowQueue: string): string {
  return `${workflowQueue}-nexus`;
}
