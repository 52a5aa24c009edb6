/**
 * The steps of a campaign that call activities: the pre-flight check, reading the next chunk of the
 * audience, sending a chunk. Each takes what it needs and changes the state only through campaign-state.
 */
import { ApplicationFailure, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createAudienceActivities } from '../activities/audience.js';
import type { CampaignChunkResult, createCampaignProviderActivities } from '../activities/campaign.js';
import type { createCampaignInputActivities } from '../activities/campaign-inputs.js';
import type { CampaignInput } from '../src/api/campaign-io.js';
import { CAMPAIGN_DEFAULTS, RECIPIENT_TIME_ZONE } from '../src/api/constants.js';
import { uniformText } from '../src/api/message-template.js';
import { countSegments } from '../src/api/segments.js';
import {
  type CampaignState,
  chunkSizes,
  type PendingChunk,
  queueChunks,
  recordInvalid,
  recordSuppressed,
  withoutSuppressed,
} from './campaign-state.js';
import { type RequestWindow, windowOfChunk } from '../src/definitions/send-window.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { idempotencyKey } from '../src/definitions/workflow-ids.js';
import { CAMPAIGN_PATCHES } from './campaign-patches.js';
import { BULK_PROVIDER_ACTIVITY_OPTIONS, STORE_ACTIVITY_OPTIONS } from './options.js';
import { BOUNDED_RETRY } from './retry-policies.js';
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

/** The campaign's provider calls; with a team, they carry it as their fairness key (the request budget's share). */
function provider({ team }: CampaignInput) {
  const fairness = team !== undefined && patched(CAMPAIGN_PATCHES.teamFairnessKey);
  return proxyActivities<ReturnType<typeof createCampaignProviderActivities>>({
    ...BULK_PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: providerTaskQueue(workflowInfo().taskQueue),
    ...(fairness ? { priority: { fairnessKey: team } } : {}),
  });
}

const audience = proxyActivities<ReturnType<typeof createAudienceActivities>>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '2 minutes',
  retry: BOUNDED_RETRY,
});

/** Keeps the input in the message store, where a retry to the failed finds it (runs recorded before did not). */
export async function keepInputForRetry(input: CampaignInput): Promise<void> {
  if (!patched(CAMPAIGN_PATCHES.keepInputForRetry)) return;
  await proxyActivities<ReturnType<typeof createCampaignInputActivities>>(STORE_ACTIVITY_OPTIONS).keepCampaignInput(
    input,
  );
}

/** A message with placeholders: each recipient's text is rendered from their audience fields. */
export function isPersonal(input: CampaignInput): boolean {
  return uniformText(input.message) === null;
}

/** A send window in each recipient's own local hours: their zones are found as the audience is read. */
export function inRecipientZones(input: CampaignInput): boolean {
  return input.sendWindow?.timeZone === RECIPIENT_TIME_ZONE;
}

/** Chunks read at once from a file or URL when every recipient gets the same text at the same hours. */
const CHUNKS_PER_UNIFORM_PAGE = 4;

/**
 * How many chunks one page read holds. A uniform campaign reads several, so the sends in flight do not each
 * wait for a read of their own; personal texts and local hours keep one per page (their groups are per page).
 * Runs recorded before this read one chunk per page, and replay so.
 */
function chunksPerPage(input: CampaignInput): number {
  if (isPersonal(input) || inRecipientZones(input)) return 1;
  return patched(CAMPAIGN_PATCHES.severalChunksPerPage) ? CHUNKS_PER_UNIFORM_PAGE : 1;
}

/** What reading the audience needs beyond the page: the template to group by, the window to find zones for. */
function groupingOf(input: CampaignInput) {
  return {
    ...(isPersonal(input) ? { message: input.message } : {}),
    ...(inRecipientZones(input) ? { sendWindow: input.sendWindow } : {}),
  };
}

/**
 * Validates an inline list, counts a source's recipients (and renders every personal text, so a missing
 * field fails here), and checks the estimated cost against the wallet. `askAccountAtOnce`: the price and the
 * balance are asked for while the audience is read, not after (runs recorded before this asked after).
 */
export async function preflight(campaign: CampaignContext, state: CampaignState, askAccountAtOnce: boolean) {
  const { input } = campaign;
  const source = input.audience;
  const estimateCost = input.preflight ?? CAMPAIGN_DEFAULTS.preflight;
  const askAccount = () => Promise.all([provider(input).getCampaignPricing(), provider(input).getCampaignBalance()]);
  const early = estimateCost && askAccountAtOnce ? askAccount() : undefined;
  // Handled here too: if reading the audience fails first, nobody awaits it, and that must not fail the task.
  early?.catch(() => undefined);
  if (source.type === 'inline') await prepareInline(input, source.recipients, state);
  // Without the estimate a uniform text needs no scan; personal texts and zones are always checked first.
  if (!estimateCost && !isPersonal(input) && !inRecipientZones(input)) return;
  const texts = source.type === 'inline' ? undefined : await scanSource(campaign, source, state);
  if (!estimateCost) return;
  const recipients = state.audienceTotal ?? 0;
  const [pricing, balance] = await (early ?? askAccount());
  checkEstimate(state, input, { recipients, texts: texts ?? uniformTexts(input, recipients), pricing, balance });
}

type TextsOfAudience = { totalSegments: number; maxSegments: number; ucs2Recipients: number };

async function prepareInline(input: CampaignInput, recipients: string[], state: CampaignState): Promise<void> {
  const prepared = await audience.prepareInlineAudience({ recipients, defaultCountry: input.defaultCountry });
  state.audience = { kind: 'list', remaining: prepared.recipients };
  state.entriesRead = recipients.length;
  state.valid = prepared.recipients.length;
  state.duplicates = prepared.duplicates;
  state.invalidSample = prepared.invalid;
  state.invalidCount = prepared.invalidCount;
  state.audienceTotal = prepared.recipients.length;
}

/** Counts a file's or URL's valid recipients and their texts' segments. */
async function scanSource(
  { campaignId, input, chunkSize }: CampaignContext,
  source: Exclude<CampaignInput['audience'], { type: 'inline' }>,
  state: CampaignState,
): Promise<TextsOfAudience | undefined> {
  const scan = await audience.scanAudience({
    campaignId,
    campaignStartedAt: state.startedAt,
    source,
    limit: chunkSize,
    defaultCountry: input.defaultCountry,
    ...groupingOf(input),
  });
  state.audienceTotal = scan.valid;
  return scan.texts;
}

/** One text for everyone: its segments times the recipients. */
function uniformTexts(input: CampaignInput, recipients: number): TextsOfAudience {
  const { segments, encoding } = countSegments(uniformText(input.message) ?? input.message);
  return {
    totalSegments: recipients * segments,
    maxSegments: segments,
    ucs2Recipients: encoding === 'UCS-2' ? recipients : 0,
  };
}

interface Account {
  pricing: { smsSegment: number; currency: string };
  balance: { balance: number; spendCap: number | null; spentThisMonth: number };
}

/** Records the estimate, and fails the pre-flight when it is over maxCost, the balance or the spend cap. */
function checkEstimate(
  state: CampaignState,
  input: CampaignInput,
  { recipients, texts, pricing, balance }: Account & { recipients: number; texts: TextsOfAudience },
): void {
  const cost = texts.totalSegments * pricing.smsSegment;
  const spendCapRemaining = balance.spendCap === null ? null : Math.max(0, balance.spendCap - balance.spentThisMonth);
  const segments = Math.max(1, texts.maxSegments);
  state.estimate = {
    recipients,
    segments,
    totalSegments: texts.totalSegments,
    ucs2Recipients: texts.ucs2Recipients,
    pricePerSegment: pricing.smsSegment,
    cost,
    currency: pricing.currency,
    balance: balance.balance,
    spendCapRemaining,
  };
  const need = isPersonal(input)
    ? `${cost} ${pricing.currency} minor units (${recipients} recipients' texts: ${texts.totalSegments} segment(s) × ${pricing.smsSegment})`
    : `${cost} ${pricing.currency} minor units (${recipients} recipients × ${segments} segment(s) × ${pricing.smsSegment})`;
  const failure = (message: string) =>
    ApplicationFailure.create({
      type: CAMPAIGN_FAILURES.preflight,
      message,
      nonRetryable: true,
      details: [state.estimate],
    });
  if (input.maxCost !== undefined && cost > input.maxCost) {
    throw failure(`over maxCost: the campaign needs about ${need}, its maxCost is ${input.maxCost}`);
  }
  if (cost > balance.balance) {
    throw failure(`insufficient balance: the campaign needs about ${need}, the balance is ${balance.balance}`);
  }
  if (spendCapRemaining !== null && cost > spendCapRemaining) {
    throw failure(`spend cap: the campaign needs about ${need}, the cap allows ${spendCapRemaining} more this month`);
  }
}

/**
 * Takes the next page of the audience into the pending list, without the recipients on the suppression list
 * now, as one chunk, or for personal texts one chunk per text; returns the first, or null when the page had
 * no one left to send to.
 */
export async function readNextChunk(
  { campaignId, input, chunkSize }: CampaignContext,
  state: CampaignState,
): Promise<PendingChunk | null> {
  const cursor = state.audience;
  if (cursor.kind === 'list') {
    // Screened before the list changes: a failed check leaves these recipients to read again.
    const next = cursor.remaining.slice(0, chunkSize);
    const screened = checksSuppressionList() ? await screenRecipients(next) : unscreened(next);
    cursor.remaining.splice(0, chunkSize);
    recordSuppressed(state, screened.suppressed.length);
    return queueChunks(state, screened.send)[0] ?? null;
  } else {
    if (input.audience.type === 'inline') throw new Error('unreachable: an inline audience is read as a list');
    const page = { cursor: cursor.cursor, firstIndex: state.entriesRead };
    const chunksPerRead = chunksPerPage(input);
    const read = await audience.readAudiencePage({
      campaignId,
      campaignStartedAt: state.startedAt,
      source: input.audience,
      cursor: cursor.cursor,
      limit: chunkSize * chunksPerRead,
      firstIndex: state.entriesRead,
      defaultCountry: input.defaultCountry,
      ...groupingOf(input),
    });
    const screened = checksSuppressionList() ? await screenRecipients(read.recipients) : unscreened(read.recipients);
    cursor.cursor = read.nextCursor;
    cursor.exhausted = read.nextCursor === null;
    state.entriesRead += read.entries;
    state.valid += read.recipients.length;
    state.duplicates += read.duplicates;
    recordInvalid(state, read.invalid);
    recordSuppressed(state, screened.suppressed.length);
    const kept = withoutSuppressed(read.recipients, read.groups, screened.suppressed);
    const groups = chunksPerRead > 1 ? chunkSizes(kept.recipients.length, chunkSize) : kept.groups;
    return queueChunks(state, kept.recipients, groups, isPersonal(input) ? page : undefined)[0] ?? null;
  }
}

/**
 * Sends one chunk under its idempotency key. The activity records the messages in the message store,
 * awaited by this campaign, before it completes, and returns the outcomes already known for them. With a
 * send window, the activity checks it right before the request (`mayHaveBeenSent`: a send was started under
 * this key before, so it completes whatever the time).
 */
export function sendChunk(
  { campaignId, input, chunkSize }: CampaignContext,
  state: CampaignState,
  chunk: PendingChunk,
  mayHaveBeenSent: boolean,
): Promise<CampaignChunkResult> {
  const { audience: source, defaultCountry } = input;
  // A personal chunk carries its template and where its page is; the activity renders the text.
  const page =
    chunk.page && source.type !== 'inline'
      ? { campaignId, campaignStartedAt: state.startedAt, source, limit: chunkSize, defaultCountry, ...chunk.page }
      : undefined;
  const message = page ? input.message : (uniformText(input.message) ?? input.message);
  const zoned = windowOfChunk(input.sendWindow, chunk.timeZone);
  const window: RequestWindow | undefined = zoned ? { window: zoned, mayHaveBeenSent } : undefined;
  return provider(input).sendCampaignChunk(
    { recipients: chunk.recipients, sender: input.sender, message },
    // The first run's id is kept by continue-as-new, a reset and a worker crash, but not by a new start
    // with the same workflow id (a schedule's runs can share one), so no two campaigns share a key.
    idempotencyKey(campaignId, `chunk-${chunk.number}`),
    ...(page || window ? [{ ...(page ? { page } : {}), ...(window ? { window } : {}) }] : []),
  );
}
