/**
 * `smsCampaign`: one text to an audience of any size. Pre-flight (validate, de-duplicate, estimate the cost,
 * check the balance), then chunks of up to 1000 recipients, a few in flight at once, each sent once by its
 * deterministic idempotency key on the rate-limited provider queue, each message tracked to its final state
 * through the per-message workflows. A sliding window bounds the messages awaiting an outcome, and the run
 * continues as new before its history grows past a few thousand events, so state, signals and histories
 * stay bounded at any size.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { createAudienceActivities } from '../activities/audience.js';
import type { createCampaignProviderActivities } from '../activities/campaign.js';
import type { createSubscriptionActivities } from '../activities/subscriptions.js';
import type { CampaignInput, CampaignPhase, CampaignProgress, CampaignResult } from '../src/api/campaign-io.js';
import { CAMPAIGN_DEFAULTS } from '../src/api/constants.js';
import { countSegments } from '../src/api/segments.js';
import {
  campaignProgressQuery,
  cancelCampaignUpdate,
  pauseCampaignUpdate,
  resumeCampaignUpdate,
} from '../src/definitions/campaign.js';
import { messageOutcomeSignal } from '../src/definitions/message-status.js';
import { SA } from '../src/definitions/search-attributes.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { campaignKeyOf, idempotencyKey } from '../src/definitions/workflow-ids.js';
import {
  type AudienceCursor,
  type CampaignState,
  initialState,
  Outstanding,
  type PendingChunk,
  recordInvalid,
  recordNotFinal,
  recordOutcome,
} from './campaign-state.js';
import { nextWindowOpening } from './campaign-window.js';
import { MESSAGE_STATUS_DEFAULTS } from './message-status.js';
import { PROVIDER_ACTIVITY_OPTIONS, TEMPORAL_ACTIVITY_OPTIONS } from './options.js';

/** Grace beyond the wait window for the message workflows to ask the provider and report back. */
const REPORT_GRACE_MS = 10 * 60 * 1000;

export const CAMPAIGN_FAILURES = {
  preflight: 'CampaignPreflightFailed',
  failed: 'CampaignFailed',
} as const;

export async function smsCampaign(input: CampaignInput, carried?: CampaignState): Promise<CampaignResult> {
  const { workflowId, taskQueue, firstExecutionRunId } = workflowInfo();
  /** This campaign, across continue-as-new; a later start with the same workflow id is another campaign. */
  const campaignId = `${workflowId}/${firstExecutionRunId}`;
  const chunkSize = input.chunkSize ?? CAMPAIGN_DEFAULTS.chunkSize;
  const maxOutstanding = Math.max(input.maxOutstanding ?? CAMPAIGN_DEFAULTS.maxOutstanding, chunkSize);
  const maxEventsPerRun = input.maxEventsPerRun ?? CAMPAIGN_DEFAULTS.maxEventsPerRun;
  const chunksInFlight = input.chunksInFlight ?? CAMPAIGN_DEFAULTS.chunksInFlight;
  const waitWindowMs = input.waitWindowMs ?? MESSAGE_STATUS_DEFAULTS.waitWindowMs;

  const state = carried ?? initialState(new Date(Date.now()).toISOString(), audienceCursorOf(input));
  state.runs += 1;
  const outstanding = Outstanding.from(state.outstanding);
  let phase: CampaignPhase = state.preflightDone ? 'sending' : 'preflight';
  let windowOpensAt: number | null = null;
  let finished = false;
  /** Chunk sends in progress: chunk number → recipients. */
  const sending = new Map<number, number>();
  /** A failure no retry fixed, acted on once the sends in progress have answered. */
  let failure: { what: string; error: unknown } | null = null;

  // Handlers first, synchronously: signals buffered before this run started are delivered as soon as they exist.
  setHandler(messageOutcomeSignal, (outcome) => {
    if (outstanding.settle(outcome.providerMessageId)) recordOutcome(state, outcome);
  });
  setHandler(campaignProgressQuery, () => progress());
  const mustBeRunning =
    (action: string) =>
    (..._args: unknown[]) => {
      if (finished) throw new Error(`cannot ${action}: the campaign has finished`);
      if (state.cancelled && action !== 'cancel') throw new Error(`cannot ${action}: the campaign is cancelled`);
    };
  setHandler(
    pauseCampaignUpdate,
    (request) => {
      state.paused = true;
      state.pausedReason = request?.reason?.trim() || 'paused by an operator';
      return progress();
    },
    { validator: mustBeRunning('pause') },
  );
  setHandler(
    resumeCampaignUpdate,
    () => {
      state.paused = false;
      state.pausedReason = null;
      return progress();
    },
    { validator: mustBeRunning('resume') },
  );
  setHandler(
    cancelCampaignUpdate,
    () => {
      state.cancelled = true;
      return progress();
    },
    { validator: mustBeRunning('cancel') },
  );

  const provider = proxyActivities<ReturnType<typeof createCampaignProviderActivities>>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: providerTaskQueue(taskQueue),
  });
  const audience = proxyActivities<ReturnType<typeof createAudienceActivities>>({
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: '2 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
  });
  const subscriptions = proxyActivities<ReturnType<typeof createSubscriptionActivities>>(TEMPORAL_ACTIVITY_OPTIONS);

  /** Subscriptions in progress, by the ids they cover (handed to the next run if this one closes first). */
  const pendingWatches = new Map<Promise<void>, string[]>();
  let watchFailure: unknown;

  function progress(): CampaignProgress {
    return {
      phase: currentPhase(),
      paused: state.paused,
      pausedReason: state.pausedReason,
      cancelled: state.cancelled,
      audience: {
        read: state.entriesRead,
        valid: state.valid,
        invalid: state.invalidCount,
        duplicates: state.duplicates,
        total: state.audienceTotal,
      },
      sent: state.sent,
      queued: outstanding.size,
      counts: { ...state.counts },
      cost: state.cost,
      currency: state.currency ?? state.estimate?.currency ?? null,
      chunks: state.chunksSent,
      estimate: state.estimate,
      windowOpensAt:
        phase === 'outside-window' && windowOpensAt !== null ? new Date(windowOpensAt).toISOString() : null,
      runs: state.runs,
      startedAt: state.startedAt,
    };
  }

  function currentPhase(): CampaignPhase {
    if (finished) return state.cancelled ? 'cancelled' : 'completed';
    if (phase === 'preflight') return phase;
    if (state.cancelled || !hasMoreToSend()) return 'draining';
    if (state.paused) return 'paused';
    return phase;
  }

  function audienceRemains(): boolean {
    const a = state.audience;
    return a.kind === 'list' ? a.remaining.length > 0 : !a.exhausted;
  }

  function hasMoreToSend(): boolean {
    return state.pendingChunks.length > 0 || audienceRemains();
  }

  function unsentPendingChunk(): PendingChunk | undefined {
    return state.pendingChunks.find((c) => !sending.has(c.number));
  }

  /** Sent and awaiting an outcome, or being sent: what `maxOutstanding` bounds. */
  function committed(): number {
    let inFlight = 0;
    for (const recipients of sending.values()) inFlight += recipients;
    return outstanding.size + inFlight;
  }

  function throttled(): boolean {
    return committed() > 0 && committed() + chunkSize > maxOutstanding;
  }

  function canStartSend(): boolean {
    return sending.size < chunksInFlight && (unsentPendingChunk() !== undefined || audienceRemains()) && !throttled();
  }

  function shouldContinueAsNew(): boolean {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength >= maxEventsPerRun;
  }

  /** Waits for `done`, for a reason to continue as new, or until the next outstanding deadline / `timeoutMs`. */
  async function waitFor(done: () => boolean, timeoutMs?: number): Promise<void> {
    const deadline = outstanding.nextDeadline();
    const untilDeadline = deadline === null ? undefined : Math.max(1, deadline - Date.now());
    const timeout = [timeoutMs, untilDeadline].filter((t): t is number => t !== undefined);
    const wake = () => done() || shouldContinueAsNew();
    if (timeout.length) await condition(wake, Math.max(1, Math.min(...timeout)));
    else await condition(wake);
  }

  /** Messages whose outcome never came within their deadline count as `unknown` and are reported. */
  function expireOverdue(): void {
    for (const id of outstanding.expire(Date.now())) {
      state.counts.unknown = (state.counts.unknown ?? 0) + 1;
      recordNotFinal(state, id);
    }
  }

  /**
   * A failure no retry fixed. Before anything was sent the campaign fails, with the reason; after, it pauses
   * with the reason, so an operator can fix the cause (top up, approve the sender) and resume, or cancel.
   */
  function onFailure(what: string, error: unknown): void {
    if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
    const cause = error.cause instanceof ApplicationFailure ? error.cause : undefined;
    const type = cause?.type ?? CAMPAIGN_FAILURES.failed;
    const message = cause?.message ?? error.cause?.message ?? error.message;
    if (state.sent === 0) {
      throw ApplicationFailure.create({
        type,
        message: `the campaign stopped before sending anything: ${what} failed: ${message}`,
        nonRetryable: true,
      });
    }
    state.paused = true;
    state.pausedReason = `${type}: ${message} (while ${what}); fix the cause, then resume, or cancel`;
  }

  async function preflight(): Promise<void> {
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
    const [pricing, balance] = await Promise.all([provider.getCampaignPricing(), provider.getCampaignBalance()]);
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
      throw ApplicationFailure.create({
        type: CAMPAIGN_FAILURES.preflight,
        message: `insufficient balance: the campaign needs about ${need}, the balance is ${balance.balance}`,
        nonRetryable: true,
        details: [state.estimate],
      });
    }
    if (spendCapRemaining !== null && cost > spendCapRemaining) {
      throw ApplicationFailure.create({
        type: CAMPAIGN_FAILURES.preflight,
        message: `spend cap: the campaign needs about ${need}, the cap allows ${spendCapRemaining} more this month`,
        nonRetryable: true,
        details: [state.estimate],
      });
    }
  }

  async function readNextChunk(): Promise<PendingChunk | null> {
    const cursor = state.audience;
    let recipients: string[];
    if (cursor.kind === 'list') {
      recipients = cursor.remaining.splice(0, chunkSize);
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
      cursor.cursor = page.nextCursor;
      cursor.exhausted = page.nextCursor === null;
      state.entriesRead += page.entries;
      state.valid += page.recipients.length;
      state.duplicates += page.duplicates;
      recordInvalid(state, page.invalid);
      recipients = page.recipients;
    }
    if (recipients.length === 0) return null;
    const chunk = { number: state.nextChunk++, recipients };
    state.pendingChunks.push(chunk);
    return chunk;
  }

  /** Starts sending a chunk, not awaited: the loop may start others while it is in flight. */
  function startSending(chunk: PendingChunk): void {
    sending.set(chunk.number, chunk.recipients.length);
    provider
      .sendCampaignChunk(
        { recipients: chunk.recipients, sender: input.sender, message: input.message },
        // The first run's id is kept by continue-as-new, a reset and a worker crash, but not by a new start
        // with the same workflow id (a schedule's runs can share one), so no two campaigns share a key.
        idempotencyKey(campaignId, `chunk-${chunk.number}`),
      )
      .then(
        (sent) => {
          state.pendingChunks = state.pendingChunks.filter((c) => c.number !== chunk.number);
          state.chunksSent += 1;
          state.sent += sent.providerMessageIds.length;
          state.cost += sent.cost;
          state.currency = sent.currency;
          outstanding.add(sent.providerMessageIds, Date.now() + waitWindowMs + REPORT_GRACE_MS);
          watch(sent.providerMessageIds);
        },
        // The chunk stays pending: resuming sends it again under the same key.
        (error: unknown) => void (failure ??= { what: `sending chunk ${chunk.number}`, error }),
      )
      .finally(() => sending.delete(chunk.number));
  }

  /** Subscribes this campaign to each message's outcome; not awaited, so the next chunk can go meanwhile. */
  function watch(providerMessageIds: string[]): void {
    const done: Promise<void> = subscriptions
      .watchMessages({ providerMessageIds, subscriber: workflowId, waitWindowMs })
      .then(
        () => void pendingWatches.delete(done),
        (error: unknown) => {
          watchFailure ??= error;
          pendingWatches.delete(done);
        },
      );
    pendingWatches.set(done, providerMessageIds);
  }

  async function finish(): Promise<void> {
    await Promise.all(pendingWatches.keys());
    if (watchFailure) throw watchFailure;
    await condition(allHandlersFinished);
  }

  if (state.runs === 1) tagForOperators(input);
  // Subscriptions the previous run had not finished: made again (subscribing twice is harmless).
  for (const ids of state.unwatched.splice(0)) watch(ids);
  if (!state.preflightDone) {
    try {
      await preflight();
    } catch (error) {
      onFailure('the pre-flight check', error);
    }
    state.preflightDone = true;
    phase = 'sending';
  }

  for (;;) {
    if (shouldContinueAsNew()) {
      // Sends in progress answer in this run (their messages are recorded here); nothing new starts.
      if (sending.size > 0) {
        await condition(() => sending.size === 0);
        continue;
      }
      if (!failure) {
        // No wait for subscriptions in progress: outcomes keep arriving meanwhile, and the run must close
        // near its threshold. The next run makes them again.
        await condition(allHandlersFinished);
        if (watchFailure) throw watchFailure;
        state.outstanding = outstanding.toGroups();
        state.unwatched = [...pendingWatches.values()];
        return await continueAsNew<typeof smsCampaign>(withoutInlineList(input), state);
      }
    }
    expireOverdue();

    if (failure) {
      // Whether the campaign fails or pauses depends on what was sent: decide once every send has answered.
      if (sending.size > 0) {
        await waitFor(() => sending.size === 0);
        continue;
      }
      const { what, error } = failure;
      failure = null;
      onFailure(what, error);
      continue;
    }
    const stopWaiting = () => failure !== null || state.cancelled;

    if (state.cancelled || !hasMoreToSend()) {
      if (outstanding.size === 0 && sending.size === 0) break;
      await waitFor(() => (outstanding.size === 0 && sending.size === 0) || failure !== null);
      continue;
    }
    if (state.paused) {
      await waitFor(() => !state.paused || stopWaiting());
      continue;
    }
    if (input.sendWindow) {
      const opensAt = nextWindowOpening(Date.now(), input.sendWindow);
      if (opensAt !== null) {
        phase = 'outside-window';
        windowOpensAt = opensAt;
        await waitFor(() => state.paused || stopWaiting(), opensAt - Date.now());
        continue;
      }
    }
    if (!canStartSend()) {
      phase = throttled() ? 'throttled' : 'sending';
      await waitFor(() => canStartSend() || !hasMoreToSend() || state.paused || stopWaiting());
      continue;
    }

    phase = 'sending';
    try {
      const chunk = unsentPendingChunk() ?? (await readNextChunk());
      if (chunk) startSending(chunk);
    } catch (error) {
      failure ??= { what: 'reading the audience', error };
    }
  }

  finished = true;
  await finish();
  return {
    cancelled: state.cancelled,
    sent: state.sent,
    counts: { ...state.counts },
    cost: state.cost,
    currency: state.currency ?? state.estimate?.currency ?? null,
    chunks: state.chunksSent,
    duplicates: state.duplicates,
    invalid: { count: state.invalidCount, recipients: state.invalidSample },
    notFinal: { count: state.notFinalCount, ids: state.notFinalIds },
    estimate: state.estimate,
    runs: state.runs,
    startedAt: state.startedAt,
    completedAt: new Date(Date.now()).toISOString(),
  };
}

function audienceCursorOf(input: CampaignInput): AudienceCursor {
  // An inline list is validated in pre-flight and then kept, already clean, in the state.
  return input.audience.type === 'inline'
    ? { kind: 'list', remaining: [] }
    : { kind: 'source', cursor: null, exhausted: false };
}

/** The next run gets the remaining inline recipients through its state, not the whole list again. */
function withoutInlineList(input: CampaignInput): CampaignInput {
  return input.audience.type === 'inline' ? { ...input, audience: { type: 'inline', recipients: [] } } : input;
}

/** Search attributes for operators, for starts that did not set them (e.g. from another language). */
function tagForOperators(input: CampaignInput): void {
  const { workflowId, typedSearchAttributes } = workflowInfo();
  const wanted = [
    { key: SA.kind, value: 'campaign' },
    { key: SA.campaignKey, value: campaignKeyOf(workflowId) },
    { key: SA.sender, value: input.sender },
  ];
  const missing = wanted.filter(({ key }) => typedSearchAttributes.get(key) === undefined);
  if (missing.length) upsertSearchAttributes(missing);
}
