/**
 * Teams: who a campaign or schedule sends for. Teams sharing one provider token each get their weighted share
 * of its requests while several send; a team alone gets them all. Weights are written `clinic:3,marketing:1`
 * (MSGFLOW_TEAM_WEIGHTS, or one or more a line in MSGFLOW_TEAM_WEIGHTS_FILE); a team not named weighs 1.
 */
import { z } from 'zod';
import { TEAM_NAME_PATTERN } from './constants.js';

/** The team of a campaign started without one. */
export const DEFAULT_TEAM = 'default';

/** The weight of a team the weights do not name. */
export const DEFAULT_TEAM_WEIGHT = 1;

/** Carried as the campaign's Temporal fairness key (at most 64 bytes): ASCII letters, digits, `_ . -`. */
export const TeamName = z
  .string()
  .regex(TEAM_NAME_PATTERN, 'must be a team name: letters, digits, _ . - (at most 64), e.g. clinic');

/** A team's share relative to the others': 3 beside 1 gets three quarters of the requests. */
export const TeamWeight = z.number().positive('must be more than 0').max(1000, 'must be at most 1000');

export type TeamWeights = Readonly<Record<string, number>>;

export class TeamWeightsError extends Error {
  override name = 'TeamWeightsError';
}

/**
 * Reads `team:weight` entries separated by commas, spaces or lines; `#` starts a comment to the end of its
 * line. A team named twice is an error, as is any entry that is not `team:weight`.
 */
export function parseTeamWeights(text: string): TeamWeights {
  const entries = text
    .split('\n')
    .map((line) => line.replace(/#.*/, ''))
    .flatMap((line) => line.split(/[\s,]+/))
    .filter(Boolean);
  const weights: Record<string, number> = {};
  for (const entry of entries) {
    const [team = '', weight, ...rest] = entry.split(':');
    if (weight === undefined || rest.length)
      throw new TeamWeightsError(`"${entry}" is not team:weight, e.g. clinic:3,marketing:1`);
    const name = TeamName.safeParse(team);
    if (!name.success) throw new TeamWeightsError(`"${entry}": the team ${name.error.issues[0]!.message}`);
    // Number('') is 0 and Number(' 2') is 2: only plain decimal numbers are weights.
    const value = /^\d+(\.\d+)?$/.test(weight) ? TeamWeight.safeParse(Number(weight)) : undefined;
    if (!value?.success)
      throw new TeamWeightsError(
        `"${entry}": the weight ${value ? value.error.issues[0]!.message : 'must be a number'}, e.g. ${team}:3`,
      );
    if (Object.hasOwn(weights, team)) throw new TeamWeightsError(`"${entry}": the team ${team} is named twice`);
    weights[team] = value.data;
  }
  return weights;
}

/** `team`'s weight in `weights`. */
export function weightOf(weights: TeamWeights, team: string): number {
  return Object.hasOwn(weights, team) ? weights[team]! : DEFAULT_TEAM_WEIGHT;
}

/** MSGFLOW_TEAM_WEIGHTS as an environment variable: parsed, or one clear issue. */
export const TeamWeightsText = z.string().transform((text, context) => {
  try {
    return parseTeamWeights(text);
  } catch (error) {
    context.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});
