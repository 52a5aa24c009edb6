/**
 * `msgflow campaign retry <key>`: resend a campaign to its recipients that failed, as the campaign
 * `<key>:retry` (started once; again, the same run). Its pre-flight count and price are printed first.
 */
import type { Command } from 'commander';
import type { CostEstimate } from '../api/campaign-io.js';
import { DEFAULT_RETRY_STATUSES, RETRY_STATUSES } from '../api/campaign-retry.js';
import { preflightEstimate, type RetryOverrides, retryCampaign } from '../starter/campaign-retry.js';
import type { CampaignRun } from '../starter/campaigns.js';
import {
  addCampaignOptions,
  type CampaignFlags,
  campaignFieldsFrom,
  followCampaign,
  formatResult,
  withMsgflow,
} from './campaign.js';
import { CliInputError, failWorkflow, type JsonFlag, printResult, withJson } from './common.js';
import { withStore } from './store.js';

type RetryFlags = CampaignFlags & JsonFlag & { status?: string; wait?: boolean };

/** `2 recipient(s), 1 segment(s) each, price 6 USD (balance 994 USD)`. */
export function formatEstimate(estimate: CostEstimate | null): string {
  if (!estimate) return 'no pre-flight estimate (pre-flight skipped, or it failed)';
  const segments = estimate.totalSegments ?? estimate.recipients * estimate.segments;
  return (
    `${estimate.recipients} recipient(s), ${segments} segment(s), price ${estimate.cost} ${estimate.currency} ` +
    `(balance ${estimate.balance} ${estimate.currency})`
  );
}

function statusesFrom(list: string | undefined): string[] | undefined {
  if (list === undefined) return undefined;
  const states = list
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const unknown = states.filter((s) => !(RETRY_STATUSES as readonly string[]).includes(s));
  if (states.length === 0 || unknown.length > 0)
    throw new CliInputError(
      `--status: ${unknown.length ? `"${unknown.join(', ')}" cannot be retried` : 'no state given'}; give some of ${RETRY_STATUSES.join(', ')}`,
    );
  return states;
}

async function printRetry(key: string, run: CampaignRun, flags: RetryFlags): Promise<void> {
  const estimate = await preflightEstimate(run);
  const told = { workflowId: run.workflowId, retryOf: key, estimate };
  if (!flags.json) console.log(`retry ${run.workflowId} of ${key}: ${formatEstimate(estimate)}`);
  if (!flags.wait) {
    if (flags.json) printResult(flags, told, () => []);
    return;
  }
  try {
    const result = await followCampaign(run, flags);
    printResult(flags, { ...told, ...result }, () => formatResult(run.workflowId, result));
  } catch (error) {
    failWorkflow(flags, run.workflowId, error);
  }
}

export function addCampaignRetryCommand(campaign: Command): void {
  withJson(
    addCampaignOptions(
      campaign
        .command('retry <key>')
        .description(
          `Resend campaign <key> to its recipients that failed, as campaign <key>:retry (started once: again, the same run), with its text and settings unless given; its count and price are shown first; refused (exit status 3) while <key> runs`,
        ),
      { required: false },
    )
      .option(
        '--status <states>',
        `final states to send to again, comma-separated: some of ${RETRY_STATUSES.join(', ')} (default ${DEFAULT_RETRY_STATUSES.join(',')})`,
      )
      .option('--wait', 'show live progress until the retry ends, then its result'),
  ).action(async (key: string, flags: RetryFlags) => {
    await withStore((store) =>
      withMsgflow(async (msgflow, client) => {
        const { audience, ...overrides } = campaignFieldsFrom(flags);
        if (audience)
          throw new CliInputError(
            `a retry sends to the recipients of ${key} that failed: --to, --file, --url and --loader cannot be given`,
          );
        const statuses = statusesFrom(flags.status);
        const run = await retryCampaign({ client, taskQueue: msgflow.taskQueue, store }, key, {
          statuses,
          overrides: overrides as RetryOverrides,
        });
        await printRetry(key, run, flags);
      }),
    );
  });
}
