/**
 * The team a Nexus call sends for: the one whose endpoint it came through (src/api/nexus-teams.ts). A handler
 * is fixed to its queue's team and sets it on every call that has one (campaigns: their share of the provider
 * token), as a direct caller of the facade sets `team` itself. A caller cannot pick another team's share.
 */
import { InvalidWorkflowInputError } from './validate.js';

/** `input` for `team`: the team set, or a bad-input error if the caller named another one. */
export function forTeam<T>(input: T, team: string, what: string): T & { team: string } {
  const named = (input as { team?: unknown } | null | undefined)?.team;
  if (named !== undefined && named !== team)
    throw new InvalidWorkflowInputError(what, [
      {
        path: 'team',
        message: `is set by the endpoint (${team}): call through the endpoint of team ${String(named)} to send for it`,
      },
    ]);
  return { ...input, team };
}
