/**
 * `msgflow dev`'s Nexus set-up: an endpoint for each team the worker serves (the default team's named
 * `msgflow`, another's `msgflow-<team>`), routing to msgflow's namespace and that team's queue, and a `callers`
 * namespace to call them from. Kept as they are on a restart.
 */
import type { Connection } from '@temporalio/client';
import type { NexusTeams } from '../api/nexus-teams.js';
import { DEFAULT_TEAM } from '../api/team-weights.js';
import { ensureNamespace, ensureNexusEndpoint } from '../temporal/nexus-endpoints.js';

/** The dev endpoint of the default team. */
export const DEV_NEXUS_ENDPOINT = 'msgflow';
/** The namespace `msgflow dev` makes for trying the endpoints from another team's workflows. */
export const DEV_CALLER_NAMESPACE = 'callers';

/** The endpoint name of `team` in `msgflow dev` (endpoint names allow letters, digits, `-` and `_`). */
export function devEndpointName(team: string): string {
  return team === DEFAULT_TEAM ? DEV_NEXUS_ENDPOINT : `${DEV_NEXUS_ENDPOINT}-${team.replace(/[^\w-]/g, '-')}`;
}

export interface DevNexusEndpoint {
  name: string;
  team: string;
  taskQueue: string;
}

/** Makes (or keeps) the callers' namespace and each team's endpoint into `namespace`; the endpoints. */
export async function ensureDevNexus(
  connection: Pick<Connection, 'operatorService' | 'workflowService'>,
  namespace: string,
  teams: NexusTeams,
): Promise<DevNexusEndpoint[]> {
  await ensureNamespace(connection, DEV_CALLER_NAMESPACE);
  const endpoints: DevNexusEndpoint[] = [];
  for (const [team, taskQueue] of Object.entries(teams)) {
    const name = devEndpointName(team);
    await ensureNexusEndpoint(connection, { name, namespace, taskQueue });
    endpoints.push({ name, team, taskQueue });
  }
  return endpoints;
}
