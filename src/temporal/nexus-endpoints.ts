/**
 * Nexus endpoints and caller namespaces as `msgflow dev` keeps them: created when missing, set right when they
 * differ, left alone when they match, so a restart changes nothing.
 */
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { GRPC_STATUS, grpcCodeOf } from './grpc.js';

const { google } = proto;

/** How long a namespace `msgflow dev` creates keeps closed workflows. */
const CALLER_RETENTION_SECONDS = 24 * 60 * 60;

export interface NexusEndpointTarget {
  /** The endpoint's name, as callers write it in their workflows. */
  name: string;
  /** The namespace and task queue it routes to: msgflow's, and the team's queue. */
  namespace: string;
  taskQueue: string;
}

/** What `ensureNexusEndpoint` did. */
export type EndpointOutcome = 'created' | 'updated' | 'unchanged';

/** The endpoint `target.name`, routing to `target`'s namespace and queue. */
export async function ensureNexusEndpoint(
  connection: Pick<Connection, 'operatorService'>,
  target: NexusEndpointTarget,
): Promise<EndpointOutcome> {
  const spec = {
    name: target.name,
    target: { worker: { namespace: target.namespace, taskQueue: target.taskQueue } },
  };
  const { endpoints } = await connection.operatorService.listNexusEndpoints({ name: target.name });
  const existing = endpoints?.[0];
  if (!existing) {
    await connection.operatorService.createNexusEndpoint({ spec });
    return 'created';
  }
  const worker = existing.spec?.target?.worker;
  if (worker?.namespace === target.namespace && worker.taskQueue === target.taskQueue) return 'unchanged';
  await connection.operatorService.updateNexusEndpoint({ id: existing.id, version: existing.version, spec });
  return 'updated';
}

/** The namespace `name`, registered unless it exists. Whether it was created. */
export async function ensureNamespace(connection: Pick<Connection, 'workflowService'>, name: string): Promise<boolean> {
  try {
    await connection.workflowService.registerNamespace({
      namespace: name,
      workflowExecutionRetentionPeriod: google.protobuf.Duration.fromObject({ seconds: CALLER_RETENTION_SECONDS }),
    });
    return true;
  } catch (error) {
    if (grpcCodeOf(error) === GRPC_STATUS.alreadyExists) return false;
    throw error;
  }
}

/** Creates the endpoint `target.name` into `target`'s namespace and queue (one for a while); answers its removal. */
export async function addNexusEndpoint(
  connection: Pick<Connection, 'operatorService'>,
  target: NexusEndpointTarget,
): Promise<() => Promise<unknown>> {
  const { endpoint } = await connection.operatorService.createNexusEndpoint({
    spec: { name: target.name, target: { worker: { namespace: target.namespace, taskQueue: target.taskQueue } } },
  });
  return () => connection.operatorService.deleteNexusEndpoint({ id: endpoint!.id!, version: endpoint!.version! });
}
