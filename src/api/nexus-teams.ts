/**
 * Teams served through Nexus. A Nexus handler does not learn which namespace or endpoint called it (server
 * 1.29), so each team gets an endpoint of its own, targeting a task queue of its own: the worker serves the
 * `msgflow` service on each team's queue with a handler fixed to that team, and a caller's endpoint decides
 * whose share of the provider token its campaigns use. Teams are written `clinic,marketing`
 * (MSGFLOW_NEXUS_TEAMS); the default team is served on the workflows' queue, every other team on
 * `<workflows' queue>-nexus-<team>`.
 */
import { z } from 'zod';
import { DEFAULT_TEAM, TeamName } from './team-weights.js';

/** Team → the task queue its endpoint targets. */
export type NexusTeams = Readonly<Record<string, string>>;

export class NexusTeamsError extends Error {
  override name = 'NexusTeamsError';
}

/** The queue `team`'s endpoint targets, for a worker whose workflows' queue is `workflowsQueue`. */
export function nexusTeamQueue(workflowsQueue: string, team: string): string {
  return team === DEFAULT_TEAM ? workflowsQueue : `${workflowsQueue}-nexus-${team}`;
}

/** The teams served when none are named: the default team, on the workflows' queue. */
export function defaultNexusTeams(workflowsQueue: string): NexusTeams {
  return { [DEFAULT_TEAM]: workflowsQueue };
}

/** Team names separated by commas or spaces, each once, at least one. */
export function parseNexusTeams(text: string): string[] {
  const teams = text.split(/[\s,]+/).filter(Boolean);
  if (teams.length === 0) throw new NexusTeamsError('names no team: write e.g. clinic,marketing');
  for (const [i, team] of teams.entries()) {
    const name = TeamName.safeParse(team);
    if (!name.success) throw new NexusTeamsError(`"${team}": the team ${name.error.issues[0]!.message}`);
    if (teams.indexOf(team) !== i) throw new NexusTeamsError(`the team ${team} is named twice`);
  }
  return teams;
}

/** Each team's queue: `teams` (default: the default team alone) over the workflows' queue. */
export function nexusTeamsOf(workflowsQueue: string, teams: readonly string[] = [DEFAULT_TEAM]): NexusTeams {
  return Object.fromEntries(teams.map((team) => [team, nexusTeamQueue(workflowsQueue, team)]));
}

/**
 * Checks a worker's teams: at least one, each a team name, no two on one queue (a queue's handler fixes one
 * team, so a shared queue would send one team's calls as the other's).
 */
export function checkNexusTeams(teams: NexusTeams): void {
  const entries = Object.entries(teams);
  if (entries.length === 0) throw new NexusTeamsError('no team to serve: name at least one');
  const teamOfQueue = new Map<string, string>();
  for (const [team, queue] of entries) {
    const name = TeamName.safeParse(team);
    if (!name.success) throw new NexusTeamsError(`"${team}": the team ${name.error.issues[0]!.message}`);
    if (!queue) throw new NexusTeamsError(`the team ${team} has no task queue`);
    const other = teamOfQueue.get(queue);
    if (other !== undefined)
      throw new NexusTeamsError(`the teams ${other} and ${team} share the task queue ${queue}: give each its own`);
    teamOfQueue.set(queue, team);
  }
}

/** MSGFLOW_NEXUS_TEAMS as an environment variable: the team names, or one clear issue. */
export const NexusTeamsText = z.string().transform((text, context) => {
  try {
    return parseNexusTeams(text);
  } catch (error) {
    context.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});
