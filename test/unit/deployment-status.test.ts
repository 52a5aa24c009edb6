/**
 * `msgflow deployment status`'s rules: a build may stop only when no new run is routed to it and no run is
 * pinned to it; runs are counted per build and msgflow workflow type. And a worker makes its build current
 * only as its setting says. The Temporal service is faked here (the e2e test runs both on a real server).
 */
import type { WorkflowService } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { deploymentStatus, DeploymentNotFoundError, stopVerdict } from '../../src/temporal/deployment-status.js';
import { makeBuildCurrent } from '../../src/temporal/worker-deployment.js';

describe('stopVerdict', () => {
  it('never lets the current or a ramping build stop', () => {
    expect(stopVerdict('current', 0)).toEqual({ safeToStop: false, reason: expect.stringContaining('current') });
    expect(stopVerdict('ramping', 0, 25)).toEqual({ safeToStop: false, reason: expect.stringContaining('25%') });
  });

  it('never lets a build with a pinned run stop', () => {
    expect(stopVerdict('none', 1)).toEqual({ safeToStop: false, reason: '1 pinned run still run on it' });
    expect(stopVerdict('none', 3).safeToStop).toBe(false);
  });

  it('lets a build stop when nothing is routed to it and nothing is pinned to it', () => {
    expect(stopVerdict('none', 0).safeToStop).toBe(true);
  });
});

interface FakeRun {
  build: string;
  type: string;
  pinned: boolean;
}

/** A service answering describe and count queries of the forms deploymentStatus asks, over `runs`. */
function fakeService(
  routing: { current?: string; ramping?: string; percentage?: number },
  builds: string[],
  runs: FakeRun[],
) {
  const queries: string[] = [];
  const service = {
    describeWorkerDeployment: async ({ deploymentName }: { deploymentName: string }) => ({
      workerDeploymentInfo: {
        name: deploymentName,
        routingConfig: {
          currentDeploymentVersion: routing.current ? { deploymentName, buildId: routing.current } : null,
          rampingDeploymentVersion: routing.ramping ? { deploymentName, buildId: routing.ramping } : null,
          rampingVersionPercentage: routing.percentage ?? 0,
        },
        versionSummaries: builds.map((buildId) => ({ deploymentVersion: { deploymentName, buildId }, status: 4 })),
      },
    }),
    countWorkflowExecutions: async ({ query }: { query: string }) => {
      queries.push(query);
      const build = /TemporalWorkerDeploymentVersion = 'msgflow:([^']+)'/.exec(query)![1];
      const type = /WorkflowType = '([^']+)'/.exec(query)?.[1];
      const pinnedOnly = query.includes("TemporalWorkflowVersioningBehavior = 'Pinned'");
      expect(query).toContain("ExecutionStatus = 'Running'");
      const count = runs.filter(
        (run) => run.build === build && (!type || run.type === type) && (!pinnedOnly || run.pinned),
      ).length;
      return { count };
    },
  };
  return { service: service as unknown as WorkflowService, queries };
}

describe('deploymentStatus', () => {
  it('counts open runs per build and type, and lets only an unrouted build without pinned runs stop', async () => {
    const { service } = fakeService(
      { current: 'b2', ramping: 'b3', percentage: 10 },
      ['b1', 'b2', 'b3', 'b0'],
      [
        { build: 'b1', type: 'sendSms', pinned: true },
        { build: 'b1', type: 'sendSms', pinned: true },
        { build: 'b1', type: 'smsCampaign', pinned: false },
        { build: 'b2', type: 'otpVerification', pinned: true },
        { build: 'b0', type: 'smsCampaign', pinned: false },
        { build: 'b0', type: 'somebodyElses', pinned: false },
      ],
    );
    const status = await deploymentStatus(service, 'default', 'msgflow');
    expect(status.currentBuildId).toBe('b2');
    expect(status.ramping).toEqual({ buildId: 'b3', percentage: 10 });
    expect(status.builds.map((b) => [b.buildId, b.routing, b.safeToStop])).toEqual([
      ['b2', 'current', false],
      ['b3', 'ramping', false],
      ['b0', 'none', true],
      ['b1', 'none', false],
    ]);
    const b1 = status.builds.find((b) => b.buildId === 'b1')!;
    expect(b1).toMatchObject({
      running: { sendSms: 2, smsCampaign: 1 },
      pinned: 2,
      pinnedByType: { sendSms: 2 },
      reason: '2 pinned runs still run on it',
      serverStatus: 'draining',
    });
    expect(status.builds.find((b) => b.buildId === 'b0')!.running).toEqual({ smsCampaign: 1, other: 1 });
    expect(status.builds.find((b) => b.buildId === 'b3')!.rampPercentage).toBe(10);
  });

  it('holds a build for a pinned run of a type msgflow does not register', async () => {
    const { service } = fakeService({ current: 'b2' }, ['b1', 'b2'], [{ build: 'b1', type: 'theirs', pinned: true }]);
    const b1 = (await deploymentStatus(service, 'default', 'msgflow')).builds.find((b) => b.buildId === 'b1')!;
    expect(b1).toMatchObject({ running: { other: 1 }, pinned: 1, safeToStop: false });
  });

  it('names a deployment the server does not know', async () => {
    const service = {
      describeWorkerDeployment: async () => {
        throw Object.assign(new Error('5 NOT_FOUND: not found'), { code: 5 });
      },
    } as unknown as WorkflowService;
    await expect(deploymentStatus(service, 'default', 'nope')).rejects.toThrow(DeploymentNotFoundError);
  });
});

describe('makeBuildCurrent', () => {
  /** A deployment whose version the server learns of after `unknownFor` calls, with `current` current. */
  function fakeDeployment(current: string | undefined, unknownFor = 0, { routedToUnversioned = false } = {}) {
    const state = { current, calls: 0, sets: [] as string[] };
    const notFound = () => Object.assign(new Error('5 NOT_FOUND: Version not found in deployment'), { code: 5 });
    const service = {
      describeWorkerDeployment: async () => {
        if (state.current === undefined && !routedToUnversioned) throw notFound();
        const routingConfig = state.current
          ? { currentDeploymentVersion: { buildId: state.current }, currentVersionChangedTime: { seconds: 1 } }
          : { currentVersion: '__unversioned__', currentVersionChangedTime: { seconds: 1 } };
        return { workerDeploymentInfo: { routingConfig } };
      },
      setWorkerDeploymentCurrentVersion: async ({ buildId }: { buildId: string }) => {
        if (state.calls++ < unknownFor) throw notFound();
        state.sets.push(buildId);
        state.current = buildId;
        return {};
      },
    } as unknown as WorkflowService;
    return { service, state };
  }
  const version = { deploymentName: 'msgflow', buildId: 'new' };

  it('always: makes the build current, asking again until the server knows the version', async () => {
    const { service, state } = fakeDeployment('old', 3);
    expect(await makeBuildCurrent(service, 'default', { ...version, makeCurrent: 'always' })).toBe('made-current');
    expect(state.sets).toEqual(['new']);
  });

  it('if-none: makes the first build current, and leaves a later one to the operator', async () => {
    const first = fakeDeployment(undefined);
    expect(await makeBuildCurrent(first.service, 'default', { ...version, makeCurrent: 'if-none' })).toBe(
      'made-current',
    );
    const later = fakeDeployment('old');
    expect(await makeBuildCurrent(later.service, 'default', { ...version, makeCurrent: 'if-none' })).toBe(
      'left-to-operator',
    );
    expect(later.state.sets).toEqual([]);
    // The operator routed new runs to unversioned workers: a versioned worker's restart leaves that too.
    const unversioned = fakeDeployment(undefined, 0, { routedToUnversioned: true });
    expect(await makeBuildCurrent(unversioned.service, 'default', { ...version, makeCurrent: 'if-none' })).toBe(
      'left-to-operator',
    );
    expect(unversioned.state.sets).toEqual([]);
  });

  it('never: leaves it to the operator; a build already current stays so', async () => {
    const { service, state } = fakeDeployment(undefined);
    expect(await makeBuildCurrent(service, 'default', { ...version, makeCurrent: 'never' })).toBe('left-to-operator');
    expect(state.sets).toEqual([]);
    const current = fakeDeployment('new');
    expect(await makeBuildCurrent(current.service, 'default', { ...version, makeCurrent: 'always' })).toBe(
      'already-current',
    );
  });

  it('gives up when the server never learns of the version', async () => {
    const { service } = fakeDeployment('old', Number.POSITIVE_INFINITY);
    await expect(
      makeBuildCurrent(service, 'default', { ...version, makeCurrent: 'always' }, { timeoutMs: 0 }),
    ).rejects.toThrow(/NOT_FOUND/);
  });
});
