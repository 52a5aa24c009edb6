import { describe, expect, it } from 'vitest';
import { checkNexusTeams, nexusTeamsOf, parseNexusTeams } from '../../src/api/nexus-teams.js';
import { ConfigError, parseEnv, WorkerEnv } from '../../src/config.js';
import { devEndpointName } from '../../src/cli/dev-nexus.js';
import { nexusTeamsFromSettings } from '../../src/worker.js';

describe('Nexus teams', () => {
  it('serves the default team on the workflows queue and every other on a queue of its own', () => {
    expect(nexusTeamsOf('msgflow')).toEqual({ default: 'msgflow' });
    expect(nexusTeamsOf('msgflow', parseNexusTeams('clinic, marketing default'))).toEqual({
      clinic: 'msgflow-nexus-clinic',
      marketing: 'msgflow-nexus-marketing',
      default: 'msgflow',
    });
  });

  it('refuses a list with a bad or repeated team, or none', () => {
    expect(() => parseNexusTeams('clinic,clinic')).toThrow('the team clinic is named twice');
    expect(() => parseNexusTeams('clinic,a b!')).toThrow('"b!": the team must be a team name');
    expect(() => parseNexusTeams(' , ')).toThrow('names no team');
    expect(() => parseEnv(WorkerEnv, { MSGFLOW_NEXUS_TEAMS: 'x:1' })).toThrow(
      /MSGFLOW_NEXUS_TEAMS: "x:1": the team must be a team name/,
    );
  });

  it("refuses two teams on one queue: one would send as the other's", () => {
    expect(() => checkNexusTeams({ clinic: 'q', marketing: 'q' })).toThrow(
      'the teams clinic and marketing share the task queue q: give each its own',
    );
    expect(() => checkNexusTeams({})).toThrow('no team to serve');
  });

  it('serves teams only with MSGFLOW_NEXUS, and says so when they are named without it', () => {
    const settings = (env: Record<string, string>) => parseEnv(WorkerEnv, env);
    expect(nexusTeamsFromSettings(settings({}))).toBeUndefined();
    expect(nexusTeamsFromSettings(settings({ MSGFLOW_NEXUS: 'true' }))).toEqual({ default: 'msgflow' });
    expect(() => nexusTeamsFromSettings(settings({ MSGFLOW_NEXUS_TEAMS: 'clinic' }))).toThrow(ConfigError);
  });

  it("names msgflow dev's endpoints: msgflow for the default team, msgflow-<team> for another", () => {
    expect(devEndpointName('default')).toBe('msgflow');
    expect(devEndpointName('clinic.eu')).toBe('msgflow-clinic-eu');
  });
});
