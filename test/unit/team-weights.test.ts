/**
 * Teams' weights: `clinic:3,marketing:1` read from MSGFLOW_TEAM_WEIGHTS or a file, with a clear error for each
 * wrong entry; a file is read again when it changes (a bad change keeps the last good weights); a team's name
 * is what the campaign input and the fairness key accept.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CampaignInput, CampaignScheduleInput } from '../../src/api/campaign-io.js';
import { campaignFieldsFrom } from '../../src/cli/campaign.js';
import { parseTeamWeights, TeamWeightsError } from '../../src/api/team-weights.js';
import { ConfigError, parseEnv, WorkerSettings } from '../../src/config.js';
import { teamWeightsOf, WEIGHTS_RECHECK_MS } from '../../src/temporal/team-weights.js';

describe('parseTeamWeights', () => {
  it('reads team:weight entries separated by commas, spaces or lines, with comments', () => {
    expect(parseTeamWeights('clinic:3,marketing:1')).toEqual({ clinic: 3, marketing: 1 });
    expect(parseTeamWeights('# shares\nclinic:3  # reminders first\n\nmarketing:0.5, ops-2:1\n')).toEqual({
      clinic: 3,
      marketing: 0.5,
      'ops-2': 1,
    });
    expect(parseTeamWeights('')).toEqual({});
  });

  it.each([
    ['clinic:x', '"clinic:x": the weight must be a number, e.g. clinic:3'],
    ['clinic:', '"clinic:": the weight must be a number, e.g. clinic:3'],
    ['clinic:0', '"clinic:0": the weight must be more than 0, e.g. clinic:3'],
    ['clinic:-1', '"clinic:-1": the weight must be a number, e.g. clinic:3'],
    ['clinic:5000', '"clinic:5000": the weight must be at most 1000, e.g. clinic:3'],
    ['clinic', '"clinic" is not team:weight, e.g. clinic:3,marketing:1'],
    ['clinic:1:2', '"clinic:1:2" is not team:weight, e.g. clinic:3,marketing:1'],
    [':3', '": the team must be a team name'],
    ['clinic:1,clinic:2', '"clinic:2": the team clinic is named twice'],
    ['constructor:2,constructor:3', 'the team constructor is named twice'],
  ])('refuses %s, saying why', (text, reason) => {
    expect(() => parseTeamWeights(text)).toThrow(TeamWeightsError);
    expect(() => parseTeamWeights(text)).toThrow(reason);
  });

  it('is checked with the worker settings, naming the variable', () => {
    const base = { MSGFLOW_API_TOKEN: 'x' };
    expect(parseEnv(WorkerSettings, { ...base, MSGFLOW_TEAM_WEIGHTS: 'clinic:3' }).MSGFLOW_TEAM_WEIGHTS).toEqual({
      clinic: 3,
    });
    expect(() => parseEnv(WorkerSettings, { ...base, MSGFLOW_TEAM_WEIGHTS: 'clinic:x' })).toThrow(
      /MSGFLOW_TEAM_WEIGHTS: "clinic:x": the weight must be a number/,
    );
    expect(() =>
      parseEnv(WorkerSettings, { ...base, MSGFLOW_TEAM_WEIGHTS: 'clinic:3', MSGFLOW_TEAM_WEIGHTS_FILE: '/w' }),
    ).toThrow(/not both/);
  });

  it("is a campaign's team: letters, digits, _ . - and at most 64", () => {
    const input = { sender: 'ACME', message: 'Hi', audience: { type: 'inline', recipients: ['2348012345678'] } };
    expect(CampaignInput.safeParse({ ...input, team: 'clinic' }).success).toBe(true);
    expect(CampaignInput.safeParse({ ...input, team: 'a b' }).error?.issues[0]?.message).toMatch(/team name/);
    expect(CampaignInput.safeParse({ ...input, team: 'x'.repeat(65) }).success).toBe(false);
    // `--team` on campaign start and schedule create/update, and a schedule's campaign.
    expect(campaignFieldsFrom({ team: 'clinic' })).toEqual({ team: 'clinic' });
    const schedule = { id: 'reminders', timing: { cron: ['0 9 * * *'] }, campaign: { ...input, team: 'clinic' } };
    expect(CampaignScheduleInput.parse(schedule).campaign.team).toBe('clinic');
  });
});

describe('teamWeightsOf', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.useRealTimers();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('weighs a team not named 1', () => {
    const weightOf = teamWeightsOf({ MSGFLOW_TEAM_WEIGHTS: { clinic: 3 } });
    expect([weightOf('clinic'), weightOf('marketing'), weightOf('toString')]).toEqual([3, 1, 1]);
  });

  it('reads the file again when it changes; a bad change keeps the last good weights and is said once', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const dir = mkdtempSync(join(tmpdir(), 'team-weights-'));
    dirs.push(dir);
    const file = join(dir, 'weights');
    const write = (text: string, mtimeSeconds: number) => {
      writeFileSync(file, text);
      utimesSync(file, mtimeSeconds, mtimeSeconds);
    };
    write('clinic:1', 1_000);
    const errors: string[] = [];
    const log = { debug() {}, info() {}, warn() {}, error: (message: string) => errors.push(message) };
    const weightOf = teamWeightsOf({ MSGFLOW_TEAM_WEIGHTS_FILE: file }, log);
    expect(weightOf('clinic')).toBe(1);

    write('clinic:3', 2_000);
    expect(weightOf('clinic')).toBe(1); // not looked at again within the second
    vi.advanceTimersByTime(WEIGHTS_RECHECK_MS);
    expect(weightOf('clinic')).toBe(3);

    write('clinic:x', 3_000);
    for (let i = 0; i < 3; i++) {
      vi.advanceTimersByTime(WEIGHTS_RECHECK_MS);
      expect(weightOf('clinic')).toBe(3);
    }
    expect(errors).toHaveLength(1);
    rmSync(file);
    vi.advanceTimersByTime(WEIGHTS_RECHECK_MS);
    expect(weightOf('clinic')).toBe(3);
    expect(errors).toHaveLength(2);
  });

  it('refuses at start a file it cannot read or parse', () => {
    const dir = mkdtempSync(join(tmpdir(), 'team-weights-'));
    dirs.push(dir);
    expect(() => teamWeightsOf({ MSGFLOW_TEAM_WEIGHTS_FILE: join(dir, 'missing') })).toThrow(ConfigError);
    writeFileSync(join(dir, 'bad'), 'clinic:x');
    expect(() => teamWeightsOf({ MSGFLOW_TEAM_WEIGHTS_FILE: join(dir, 'bad') })).toThrow(
      /MSGFLOW_TEAM_WEIGHTS_FILE .*bad: "clinic:x": the weight must be a number/,
    );
  });
});
