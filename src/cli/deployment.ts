/**
 * `msgflow deployment status`: per build of the workers' Temporal Worker Deployment, whether it is current or
 * ramping, the msgflow runs of each type still on it, and whether its workers may stop. Ramping, promoting
 * and rolling back are Temporal's own commands (`temporal worker deployment …`, docs/operations.md).
 */
import type { Command } from 'commander';
import { parseEnv, WorkerEnv } from '../config.js';
import { connectClient } from '../temporal/connection.js';
import {
  type BuildStatus,
  DeploymentNotFoundError,
  type DeploymentStatus,
  deploymentStatus,
} from '../temporal/deployment-status.js';
import { EXIT_CODES, fail, type JsonFlag, printResult, withJson } from './common.js';

interface StatusFlags extends JsonFlag {
  deployment?: string;
  build?: string;
}

export function registerDeploymentCommands(command: Command): void {
  withJson(
    command
      .command('status')
      .description(
        'Per build of the worker deployment: current or ramping, open msgflow runs by type, and whether its workers may stop (never while a pinned run remains)',
      )
      .option('--deployment <name>', 'the worker deployment (default: MSGFLOW_DEPLOYMENT_NAME, else msgflow)')
      .option(
        '--build <id>',
        'only this build; the command then exits 3 unless its workers may stop (for scripts that stop them)',
      ),
  ).action(async (flags: StatusFlags) => {
    const deployment = flags.deployment ?? parseEnv(WorkerEnv, process.env).MSGFLOW_DEPLOYMENT_NAME;
    const client = await connectClient();
    let status: DeploymentStatus;
    try {
      status = await deploymentStatus(client.workflowService, client.options.namespace, deployment);
    } catch (error) {
      if (error instanceof DeploymentNotFoundError) fail(error.message, EXIT_CODES.failed, { usageHint: false });
      throw error;
    } finally {
      await client.connection.close();
    }
    if (flags.build === undefined) return printResult(flags, status, () => statusLines(status));
    const build = status.builds.find((b) => b.buildId === flags.build);
    if (!build) fail(`no build ${flags.build} in worker deployment ${deployment}`, EXIT_CODES.failed);
    printResult(flags, { ...status, builds: [build] }, () => statusLines({ ...status, builds: [build] }));
    if (!build.safeToStop) process.exitCode = EXIT_CODES.refused;
  });
}

function statusLines(status: DeploymentStatus): string[] {
  const ramping = status.ramping ? `, ramping ${status.ramping.buildId} (${status.ramping.percentage}%)` : '';
  return [
    `worker deployment ${status.deployment} (namespace ${status.namespace}): current ${status.currentBuildId ?? 'none (unversioned workers)'}${ramping}`,
    ...status.builds.flatMap(buildLines),
  ];
}

function buildLines(build: BuildStatus): string[] {
  const routing = build.routing === 'ramping' ? `ramping ${build.rampPercentage}%` : build.routing;
  const server = `server: ${build.serverStatus}${build.serverDrainage ? `, ${build.serverDrainage}` : ''}`;
  const runs = Object.entries(build.running).map(([type, n]) => {
    const pinned = build.pinnedByType[type];
    return `    ${type.padEnd(16)} ${String(n).padStart(6)}${pinned ? `  (${pinned} pinned)` : ''}`;
  });
  return [
    '',
    `  build ${build.buildId}   ${routing === 'none' ? 'not routed' : routing}   (${server})`,
    ...(runs.length > 0 ? runs : ['    no open runs']),
    `    safe to stop: ${build.safeToStop ? 'yes' : 'no'} (${build.reason})`,
  ];
}
