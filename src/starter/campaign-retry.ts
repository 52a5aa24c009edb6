/**
 * Resending a campaign to the recipients it failed: a campaign keyed `<key>:retry`, started once, whose
 * audience is the first campaign's recipients in the failed states asked for (read by the worker from the
 * message store), with the first campaign's input as kept there and any field overridden. Refused while the
 * first still runs; its pre-flight (count and price) is read before anything else is told.
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { z } from 'zod';
import { CampaignInput, CampaignKey, type CostEstimate } from '../api/campaign-io.js';
import {
  DEFAULT_RETRY_STATUSES,
  RETRY_AUDIENCE_LOADER,
  retriedCampaignOf,
  RetryStatus,
} from '../api/campaign-retry.js';
import { isJsonObject } from '../api/json.js';
import { campaignWorkflowId, RETRY_KEY_SUFFIX, retriedKeyOf, retryKeyOf } from '../definitions/workflow-ids.js';
import type { MessageStore } from '../store/index.js';
import { type CampaignRun, startCampaign } from './campaigns.js';
import { validate } from './validate.js';

/** Fields of the first campaign's input to change for its retry (its audience is always the failed). */
export type RetryOverrides = Partial<Omit<z.input<typeof CampaignInput>, 'audience'>>;

export interface RetryOptions {
  /** Final states to send to again (default failed, undelivered, expired); never delivered. */
  statuses?: readonly string[];
  overrides?: RetryOverrides;
}

/** The first campaign is still running: what failed is not known yet. */
export class CampaignStillRunningError extends Error {
  override name = 'CampaignStillRunningError';
  constructor(readonly key: string) {
    super(`campaign ${key} is still running: retry it once it has ended (msgflow campaign watch ${key})`);
  }
}

/** The store keeps no input for the campaign (unknown key, or started before inputs were kept). */
export class NoKeptInputError extends Error {
  override name = 'NoKeptInputError';
  constructor(readonly key: string) {
    super(
      `the message store keeps no input for campaign ${key}: no such campaign, or it started before msgflow kept campaign inputs`,
    );
  }
}

type InputStore = Pick<MessageStore, 'campaignInputs'>;

/** Where a retry starts: Temporal, the task queue, and the store that kept the first campaign's input. */
export interface RetryTarget {
  client: Client;
  taskQueue: string;
  store: InputStore;
}

export async function retryCampaign(
  { client, taskQueue, store }: RetryTarget,
  key: string,
  { statuses = DEFAULT_RETRY_STATUSES, overrides = {} }: RetryOptions = {},
): Promise<CampaignRun> {
  const retryKey = retryKeyOf(validate(CampaignKey, key, 'Invalid campaign key'));
  validate(CampaignKey, retryKey, `Invalid campaign key: its retry's key (the key and "${RETRY_KEY_SUFFIX}")`);
  const states = validate(RetryStatus.array().min(1), [...new Set(statuses)], 'Invalid retry states');
  if (await isRunning(client, key)) throw new CampaignStillRunningError(key);
  const kept = await store.campaignInputs.input(key);
  if (!isJsonObject(kept)) throw new NoKeptInputError(key);
  const input = validate(
    CampaignInput,
    {
      ...kept,
      ...overrides,
      audience: { type: 'loader', name: RETRY_AUDIENCE_LOADER, params: { campaign: key, statuses: states } },
    },
    'Invalid retry',
  );
  return startCampaign(client, taskQueue, input, retryKey);
}

async function isRunning(client: Client, key: string): Promise<boolean> {
  try {
    const description = await client.workflow.getHandle(campaignWorkflowId(key)).describe();
    return description.status.name === 'RUNNING';
  } catch (error) {
    // Its history is gone (past the namespace's retention): it ended; the store still has what a retry needs.
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** How a campaign and its retries name each other. */
export interface CampaignRelations {
  /** The campaign this one resends to the failed of. */
  retryOf: string | null;
  /** The retry of this campaign, once started. */
  retriedBy: string | null;
}

/** From the inputs the store keeps: a retry's input names its campaign; a campaign's retry has its key. */
export async function campaignRelations(store: InputStore, key: string): Promise<CampaignRelations> {
  const [own, retry] = await Promise.all([
    store.campaignInputs.input(key),
    store.campaignInputs.input(retryKeyOf(key)),
  ]);
  const retryOf = isJsonObject(own) ? retriedCampaignOf(own) : null;
  return { retryOf, retriedBy: retry === null ? null : retryKeyOf(key) };
}

/**
 * The same, from Temporal alone (for `campaign status`, which reads no store): the run keyed `<key>:retry`,
 * and for a key `<x>:retry`, the campaign `<x>`.
 */
export async function campaignRelationsByKey(client: Client, key: string): Promise<CampaignRelations> {
  const exists = (k: string) =>
    client.workflow
      .getHandle(campaignWorkflowId(k))
      .describe()
      .then(
        () => true,
        (error: unknown) => {
          if (error instanceof WorkflowNotFoundError) return false;
          throw error;
        },
      );
  const retried = retriedKeyOf(key);
  return { retryOf: retried, retriedBy: (await exists(retryKeyOf(key))) ? retryKeyOf(key) : null };
}

const PREFLIGHT_POLL_MS = 250;

/**
 * The retry's pre-flight estimate (recipients, segments, price, balance) once its workflow has made it; null
 * when it skips the estimate (`preflight: false`) or ended without one (e.g. its pre-flight failed).
 */
export async function preflightEstimate(run: CampaignRun, timeoutMs = 60_000): Promise<CostEstimate | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await run.status().catch(() => undefined);
    if (status && (status.estimate || status.phase !== 'preflight' || status.failure)) return status.estimate;
    if (Date.now() > deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, PREFLIGHT_POLL_MS));
  }
}
