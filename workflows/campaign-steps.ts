/**
 * The steps of a campaign that call activities: the pre-flight check, reading the next chunk of the
 * audience, sending a chunk. Each takes what it needs and changes the state only through campaign-state.
 */
import { ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createAudienceActivities } from '../activities/audience.js';
import type { CampaignChunkResult, createCampaignProviderActivities } from '../activities/campaign.js';
import type { CampaignInput } from '../src/api/campaign-io.js';
import { CAMPAIGN_DEFAULTS } from '../src/api/constants.js';
import { countSegments } from '../src/api/segments.js';
import { type CampaignState, type PendingChunk, recordInvalid, recordSuppressed } from './campaign-state.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { idempotencyKey } from '../src/definitions/workflow-ids.js';
import { PROVIDER_ACTIVITY_OPTIONS } from './options.js';
import { checksSuppressionList, screenRecipients, unscreened } from './suppression.js';

export const CAMPAIGN_FAILURES = {
  preflight: 'CampaignPreflightFailed',
  failed: 'CampaignFailed',
} as const;

/** A campaign as its steps see it: the first run's identity, its input and the limits it runs with. */
export interface CampaignContext {
  /** This campaign across continue-as-new; a later start with the same workflow id is another campaign. */
  campaignId: string;
  input: CampaignInput;
  chunkSize: number;
}

function provider() {
  return proxyActivities<ReturnType<typeof createCampaignProviderActivities>>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: providerTaskQueue(workflowInfo().taskQueue),
  });
}

const audience = proxyActivities<ReturnType<typeof createAudienceActivities>>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** Validates an inline list, counts a source's recipients, and checks the estimated cost against the wallet. */
export async function preflight({ campaignId, input, chunkSize }: CampaignContext, state: CampaignState) {
  const source = input.audience;
  if (source.type === 'inline') {
    const prepared = await audience.prepareInlineAudience({
      recipients: source.recipients,
      defaultCountry: input.defaultCountry,
    });
    state.audience = { kind: 'list', remaining: prepared.recipients };
    state.entriesRead = source.recipients.length;
    state.valid = prepared.recipients.length;
    state.duplicates = prepared.duplicates;
    state.invalidSample = prepared.invalid;
    state.invalidCount = prepared.invalidCount;
    state.audienceTotal = prepared.recipients.length;
  }
  if (!(input.preflight ?? CAMPAIGN_DEFAULTS.preflight)) return;
  if (source.type !== 'inline') {
    const scan = await audience.scanAudience({
      campaignId,
      campaignStartedAt: state.startedAt,
      source,
      limit: chunkSize,
      defaultCountry: input.defaultCountry,
    });
    state.audienceTotal = scan.valid;
  }
  const recipients = state.audienceTotal ?? 0;
  const { segments } = countSegments(input.message);
  const [pricing, balance] = await Promise.all([provider().getCampaignPricing(), provider().getCampaignBalance()]);
  const cost = recipients * segments * pricing.smsSegment;
  const spendCapRemaining = balance.spendCap === null ? null : Math.max(0, balance.spendCap - balance.spentThisMonth);
  state.estimate = {
    recipients,
    segments,
    pricePerSegment: pricing.smsSegment,
    cost,
    currency: pricing.currency,
    balance: balance.balance,
    spendCapRemaining,
  };
  const need = `${cost} ${pricing.currency} minor units (${recipients} recipients × ${segments} segment(s) × ${pricing.smsSegment})`;
  if (cost > balance.balance) {
    throw preflightFailure(`insufficient balance: the campaign needs about ${need}, the balance is ${balance.balance}`);
  }
  if (spendCapRemaining !== null && cost > spendCapRemaining) {
    throw preflightFailure(
      `spend cap: the campaign needs about ${need}, the cap allows ${spendCapRemaining} more this month`,
    );
  }

  function preflightFailure(message: string) {
    return ApplicationFailure.create({
      type: CAMPAIGN_FAILURES.preflight,
      message,
      nonRetryable: true,
      details: [state.estimate],
    });
  }
}

/**
 * Takes the next chunk of the audience into the pending list, without the recipients on the suppression list
 * now; null when nothing of it is left to send.
 */
export async function readNextChunk(
  { campaignId, input, chunkSize }: CampaignContext,
  state: CampaignState,
): Promise<PendingChunk | null> {
  const cursor = state.audience;
  let recipients: string[];
  if (cursor.kind === 'list') {
    // Screened before the list changes: a failed check leaves these recipients to read again.
    const next = cursor.remaining.slice(0, chunkSize);
    const screened = checksSuppressionList() ? await screenRecipients(next) : unscreened(next);
    cursor.remaining.splice(0, chunkSize);
    recordSuppressed(state, screened.suppressed.length);
    recipients = screened.send;
  } else {
    if (input.audience.type === 'inline') throw new Error('unreachable: an inline audience is read as a list');
    const page = await audience.readAudiencePage({
      campaignId,
      campaignStartedAt: state.startedAt,
      source: input.audience,
      cursor: cursor.cursor,
      limit: chunkSize,
      firstIndex: state.entriesRead,
      defaultCountry: input.defaultCountry,
    });
    const screened = checksSuppressionList() ? await screenRecipients(page.recipients) : unscreened(page.recipients);
    cursor.cursor = page.nextCursor;
    cursor.exhausted = page.nextCursor === null;
    state.entriesRead += page.entries;
    state.valid += page.recipients.length;
    state.duplicates += page.duplicates;
    recordInvalid(state, page.invalid);
    recordSuppressed(state, screened.suppressed.length);
    recipients = screened.send;
  }
  if (recipients.length === 0) return null;
  const chunk = { number: state.nextChunk++, recipients };
  state.pendingChunks.push(chunk);
  return chunk;
}

/**
 * Sends one chunk under its idempotency key. The activity records the messages in the message store,
 * awaited by this campaign, before it completes, and returns the outcomes already known for them.
 */
export function sendChunk({ campaignId, input }: CampaignContext, chunk: PendingChunk): Promise<CampaignChunkResult> {
  return provider().sendCampaignChunk(
    { recipients: chunk.recipients, sender: input.sender, message: input.message },
    // The first run's id is kept by continue-as-new, a reset and a worker crash, but not by a new start
    // with the same workflow id (a schedule's runs can share one), so no two campaigns share a key.
    idempotencyKey(campaignId, `chunk-${chunk.number}`),
  );
}
