/**
 * Why Temporal did not take a signal, told apart by the error's kind: whether Temporal itself is out of reach
 * or overloaded (everything waits), or it refused this one workflow's signal (only that workflow waits).
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import proto from '@temporalio/proto';
import { GRPC_STATUS, type GrpcError, grpcErrorIn } from '../temporal/grpc.js';

const { google, temporal } = proto;

export type SignalFailure =
  /** The workflow has closed: nobody is left to tell. */
  | 'ended'
  /** No answer, or not in time: Temporal may be down (a probe of the server decides). */
  | 'unreachable'
  /** Temporal is over a limit of its own or its namespace's: everything waits. */
  | 'overloaded'
  /** Temporal answered and refused this workflow's signal: that workflow waits out a backoff of its own. */
  | 'refused';

const { ResourceExhaustedCause } = temporal.api.enums.v1;

export function signalFailureOf(error: unknown): SignalFailure {
  if (error instanceof WorkflowNotFoundError) return 'ended';
  const grpc = grpcErrorIn(error);
  if (!grpc) return 'refused';
  switch (grpc.code) {
    case GRPC_STATUS.unavailable:
    case GRPC_STATUS.deadlineExceeded:
    case GRPC_STATUS.cancelled:
      return 'unreachable';
    case GRPC_STATUS.resourceExhausted:
      // One workflow taking too many updates or signals at once is its own; every other cause is Temporal's.
      return exhaustedCause(grpc) === ResourceExhaustedCause.RESOURCE_EXHAUSTED_CAUSE_BUSY_WORKFLOW
        ? 'refused'
        : 'overloaded';
    default:
      return 'refused';
  }
}

function exhaustedCause(error: GrpcError): number | undefined {
  try {
    const status = error.metadata?.get('grpc-status-details-bin')?.[0];
    if (!(status instanceof Uint8Array)) return undefined;
    for (const detail of google.rpc.Status.decode(status).details ?? [])
      if (detail.type_url?.endsWith('temporal.api.errordetails.v1.ResourceExhaustedFailure') && detail.value)
        return temporal.api.errordetails.v1.ResourceExhaustedFailure.decode(detail.value).cause ?? undefined;
  } catch {
    // details we cannot read: the cause is unknown
  }
  return undefined;
}
