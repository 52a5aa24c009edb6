/** Reading the gRPC status of a failed call to Temporal: its code (gRPC's numbering) and its details. */

/** The gRPC status codes msgflow tells apart. */
export const GRPC_STATUS = {
  cancelled: 1,
  deadlineExceeded: 4,
  notFound: 5,
  alreadyExists: 6,
  permissionDenied: 7,
  resourceExhausted: 8,
  failedPrecondition: 9,
  unimplemented: 12,
  unavailable: 14,
} as const;

/** A failed call as grpc-js reports it. */
export interface GrpcError extends Error {
  code: number;
  metadata?: { get(key: string): unknown[] };
}

/**
 * The failed call in `error`: the error itself or the first of its causes with a status code (the Temporal client
 * wraps it in a ServiceError).
 */
export function grpcErrorIn(error: unknown): GrpcError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (typeof (e as Partial<GrpcError>).code === 'number') return e as GrpcError;
  return undefined;
}

/** The gRPC status code of a failed call (see grpcErrorIn); undefined for any other error. */
export function grpcCodeOf(error: unknown): number | undefined {
  return grpcErrorIn(error)?.code;
}
