/**
 * The teams' weights a worker asks the request budget with: MSGFLOW_TEAM_WEIGHTS, or the file
 * MSGFLOW_TEAM_WEIGHTS_FILE names, read again (at most once a second) whenever its modification time changes,
 * so new weights apply to the next requests without restarting the workers. A file that becomes unreadable or
 * wrong leaves the last good weights in force, and the worker says why.
 */
import { readFileSync, statSync } from 'node:fs';
import { parseTeamWeights, type TeamWeights, weightOf } from '../api/team-weights.js';
import { ConfigError, type TeamWeightsEnv } from '../config.js';
import type { Logger } from '../log.js';

/** How long a file's weights are used before its modification time is looked at again. */
export const WEIGHTS_RECHECK_MS = 1000;

/** Team → weight, as the settings say now. A file that cannot be read or parsed at start is a ConfigError. */
export function teamWeightsOf(settings: TeamWeightsEnv, logger?: Logger): (team: string) => number {
  const file = settings.MSGFLOW_TEAM_WEIGHTS_FILE;
  if (!file) {
    const weights = settings.MSGFLOW_TEAM_WEIGHTS ?? {};
    return (team) => weightOf(weights, team);
  }
  return liveWeightsFile(file, logger);
}

function readWeightsFile(file: string): { weights: TeamWeights; modifiedAt: number } {
  const modifiedAt = statSync(file).mtimeMs;
  return { weights: parseTeamWeights(readFileSync(file, 'utf8')), modifiedAt };
}

function liveWeightsFile(file: string, logger?: Logger): (team: string) => number {
  let current: { weights: TeamWeights; modifiedAt: number };
  try {
    current = readWeightsFile(file);
  } catch (error) {
    throw new ConfigError(`MSGFLOW_TEAM_WEIGHTS_FILE ${file}: ${(error as Error).message}`);
  }
  let checkedAt = Date.now();
  let reported: string | undefined;
  const recheck = () => {
    checkedAt = Date.now();
    try {
      if (statSync(file).mtimeMs === current.modifiedAt) return;
      current = readWeightsFile(file);
      reported = undefined;
      logger?.info('team weights read again', { file, weights: current.weights });
    } catch (error) {
      const reason = (error as Error).message;
      // Said once for each new problem, not every second.
      if (reason !== reported)
        logger?.error('team weights file not applied: the last weights read stay in force', { file, reason });
      reported = reason;
    }
  };
  return (team) => {
    if (Date.now() - checkedAt >= WEIGHTS_RECHECK_MS) recheck();
    return weightOf(current.weights, team);
  };
}
