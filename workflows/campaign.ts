/**
 * `smsCampaign`: one text to an audience of any size. Pre-flight (validate, de-duplicate, estimate the cost,
 * check the balance), then chunks of up to 1000 recipients, a few in flight at once, each sent once by its
 * deterministic idempotency key on the rate-limited provider queue. The sending activity records each chunk's
 * messages in the message store; the ingress signals their outcomes back, many per signal. A sliding window
 * bounds the messages awaiting an outcome, and the run continues as new before its history grows past a few
 * thousand events, so state and histories stay bounded at any size. No workflow is started per message.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { CampaignInput, CampaignPhase, CampaignResult } from '../src/api/campaign-io.js';
import { CAMPAIGN_DEFAULTS, DEFAULT_WAIT_WINDOW_MS } from '../src/api/constants.js';
import {
  campaignProgressQuery,
  cancelCampaignUpdate,
  pauseCampaignUpdate,
  resumeCampaignUpdate,
} from '../src/definitions/campaign.js';
import { OperatorView, tagForOperators } from './campaign-operators.js';
import {
  type AudienceCursor,
  type CampaignState,
  EarlyOutcomes,
  type PendingChunk,
  initialState,
  Outstanding,
  progressOf,
  recordChunkSent,
  recordOutcomes,
  resultOf,
  waitingRecipients,
} from './campaign-state.js';
import {
  CAMPAIGN_FAILURES,
  type CampaignContext,
  inRecipientZones,
  preflight,
  readNextChunk,
  sendChunk,
} from './campaign-steps.js';
import { nextWindowOpening, SEND_WINDOW_CLOSED, windowOfChunk } from '../src/definitions/send-window.js';
import { countMessageOutcomes } from './metrics.js';
import { onMessageOutcomes, releaseMessages, settleOpenMessages } from './message-outcomes.js';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';

export { CAMPAIGN_FAILURES } from './campaign-steps.js';

/** Overdue messages settled per turn of the loop, so continue-as-new is never held off for long. */
const OVERDUE_PER_TURN = 64;

export async function smsCampaign(input: CampaignInput, carried?: CampaignState): Promise<CampaignResult> {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const chunkSize = input.chunkSize ?? CAMPAIGN_DEFAULTS.chunkSize;
  const campaign: CampaignContext = { campaignId: `${workflowId}/${firstExecutionRunId}`, input, chunkSize };
  const maxOutstanding = Math.max(input.maxOutstanding ?? CAMPAIGN_DEFAULTS.maxOutstanding, chunkSize);
  const maxEventsPerRun = input.maxEventsPerRun ?? CAMPAIGN_DEFAULTS.maxEventsPerRun;
  const chunksInFlight = input.chunksInFlight ?? defaultChunksInFlight();
  const waitWindowMs = input.waitWindowMs ?? DEFAULT_WAIT_WINDOW_MS;

  const state = carried ?? initialState(new Date(Date.now()).toISOString(), audienceCursorOf(input));
  state.runs += 1;
  const outstanding = Outstanding.from(state.outstanding);
  const operators = new OperatorView();
  let phase: CampaignPhase = state.preflightDone ? 'sending' : 'preflight';
  let windowOpensAt: number | null = null;
  let finished = false;
  /** Chunk sends in progress: chunk number → recipients. */
  const sending = new Map<number, number>();
  /** A failure no retry fixed, acted on once the sends in progress have answered. */
  let failure: { what: string; error: unknown } | null = null;

  const early = new EarlyOutcomes<MessageOutcome>();
  const settle = (outcomes: MessageOutcome[]) => {
    const counted = recordOutcomes(state, outstanding, outcomes);
    countMessageOutcomes(counted);
    // Not awaited (yet): the answer of a chunk send in flight may still name them.
    if (sending.size > 0 && counted.length < outcomes.length) early.hold(outcomes, counted);
  };

  // Handlers first, synchronously: signals buffered before this run started are delivered as soon as they exist.
  onMessageOutcomes(settle);
  setHandler(campaignProgressQuery, () => progress());
  const mustBeRunning =
    (action: string) =>
    (..._args: unknown[]) => {
      if (finished) throw new Error(`cannot ${action}: the campaign has finished`);
      if (state.cancelled && action !== 'cancel') throw new Error(`cannot ${action}: the campaign is cancelled`);
    };
  setHandler(pauseCampaignUpdate, (request) => pause(request?.reason?.trim() || 'paused by an operator'), {
    validator: mustBeRunning('pause'),
  });
  setHandler(resumeCampaignUpdate, () => resume(), { validator: mustBeRunning('resume') });
  setHandler(cancelCampaignUpdate, () => cancel(), { validator: mustBeRunning('cancel') });

  function pause(reason: string) {
    state.paused = true;
    state.pausedReason = reason;
    return progress();
  }
  function resume() {
    state.paused = false;
    state.pausedReason = null;
    return progress();
  }
  function cancel() {
    state.cancelled = true;
    return progress();
  }
  function progress() {
    const opensAt = phase === 'outside-window' && windowOpensAt !== null ? new Date(windowOpensAt).toISOString() : null;
    return progressOf(state, outstanding, currentPhase(), opensAt);
  }
  function currentPhase(): CampaignPhase {
    if (finished) return state.cancelled ? 'cancelled' : 'completed';
    if (phase === 'preflight') return phase;
    if (state.cancelled || !hasMoreToSend()) return 'draining';
    if (state.paused) return 'paused';
    return phase;
  }

  const audienceRemains = () =>
    state.audience.kind === 'list' ? state.audience.remaining.length > 0 : !state.audience.exhausted;
  const hasMoreToSend = () => state.pendingChunks.length > 0 || audienceRemains();
  /** A window in each recipient's local hours: each chunk waits for its own zone's window. */
  const localHours = inRecipientZones(input);
  // Per zone and instant: a page of personal texts queues up to a thousand chunks in a handful of zones.
  const openings = new Map<string, number | null>();
  const chunkOpensAt = (chunk: PendingChunk) => {
    const window = windowOfChunk(input.sendWindow, chunk.timeZone);
    if (!window) return null;
    const key = `${Date.now()} ${window.timeZone}`;
    if (!openings.has(key)) {
      if (openings.size > 64) openings.clear();
      openings.set(key, nextWindowOpening(Date.now(), window));
    }
    return openings.get(key)!;
  };
  const unsentPendingChunk = () =>
    state.pendingChunks.find((c) => !sending.has(c.number) && (!localHours || chunkOpensAt(c) === null));
  /** When the first waiting chunk's window opens (local hours), null if none waits for one. */
  const nextChunkOpening = () => {
    const openings = state.pendingChunks.filter((c) => !sending.has(c.number)).map(chunkOpensAt);
    const times = openings.filter((t): t is number => t !== null);
    return times.length ? Math.min(...times) : null;
  };
  // Reading ahead for later windows is bounded like the outstanding messages are.
  const canReadMore = () => audienceRemains() && (!localHours || waitingRecipients(state, sending) < maxOutstanding);
  /** Sent and awaiting an outcome, or being sent: what `maxOutstanding` bounds. */
  const committed = () => outstanding.size + [...sending.values()].reduce((a, b) => a + b, 0);
  const throttled = () => committed() > 0 && committed() + chunkSize > maxOutstanding;
  const canStartSend = () =>
    sending.size < chunksInFlight && (unsentPendingChunk() !== undefined || canReadMore()) && !throttled();
  const shouldContinueAsNew = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= maxEventsPerRun;

  /** Waits for `done`, a reason to continue as new, the next outcome deadline, an operator view update or `timeoutMs`. */
  async function waitFor(done: () => boolean, timeoutMs?: number): Promise<void> {
    const deadline = outstanding.nextDeadline();
    const timeouts = [timeoutMs, deadline === null ? undefined : deadline - Date.now(), operators.show(progress())];
    const timeout = timeouts.filter((t): t is number => t !== undefined && t !== null);
    const wake = () => done() || shouldContinueAsNew();
    if (timeout.length) await condition(wake, Math.max(1, Math.min(...timeout)));
    else await condition(wake);
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
    pause(`${type}: ${message} (while ${what}); fix the cause, then resume, or cancel`);
  }

  /** Reads the next page into the pending chunks and returns its first; a failure waits for the loop to act. */
  async function readPage(): Promise<PendingChunk | null> {
    try {
      return await readNextChunk(campaign, state);
    } catch (error) {
      failure ??= { what: 'reading the audience', error };
      return null;
    }
  }

  /** Starts sending a chunk, not awaited: the loop may start others while it is in flight. */
  function startSending(chunk: PendingChunk): void {
    sending.set(chunk.number, chunk.recipients.length);
    const mayHaveBeenSent = chunk.attempted === true;
    chunk.attempted = true;
    sendChunk(campaign, state, chunk, mayHaveBeenSent)
      .then(
        (sent) => {
          recordChunkSent(state, outstanding, chunk.number, sent, Date.now() + waitWindowMs);
          settle([...sent.alreadyFinal, ...early.claim(sent.providerMessageIds)]);
        },
        (error: unknown) => {
          // Its window closed before the request was made: nothing was sent, it waits for the next opening.
          if (isWindowClosed(error)) chunk.attempted = mayHaveBeenSent;
          // Otherwise the chunk stays pending: resuming sends it again under the same key.
          else failure ??= { what: `sending chunk ${chunk.number}`, error };
        },
      )
      .finally(() => {
        sending.delete(chunk.number);
        if (sending.size === 0) early.clear();
      });
  }

  if (state.runs === 1) tagForOperators(input);
  if (!state.preflightDone) {
    // The first page is read while the audience is checked (nothing is sent before the check passes).
    // Runs recorded before this did one step after the other, and replay so.
    const atOnce = patched('preflight-at-once');
    const firstRead = atOnce && input.audience.type !== 'inline' ? readPage() : undefined;
    try {
      await preflight(campaign, state, atOnce);
    } catch (error) {
      onFailure('the pre-flight check', error);
    }
    await firstRead;
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
        await condition(allHandlersFinished);
        state.outstanding = outstanding.toGroups();
        return await continueAsNew<typeof smsCampaign>(withoutInlineList(input), state);
      }
    }
    const overdue = outstanding.overdue(Date.now(), OVERDUE_PER_TURN);
    if (overdue.length > 0) {
      // No final event within the wait window: the store once more, then the provider, decide.
      settle(await settleOpenMessages(overdue));
      continue;
    }
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
    const opensAt = input.sendWindow && !localHours ? nextWindowOpening(Date.now(), input.sendWindow) : null;
    if (opensAt !== null) {
      phase = 'outside-window';
      windowOpensAt = opensAt;
      await waitFor(() => state.paused || stopWaiting(), opensAt - Date.now());
      continue;
    }
    const chunkOpening = localHours && !unsentPendingChunk() && !canReadMore() ? nextChunkOpening() : null;
    if (chunkOpening !== null) {
      // Every recipient read so far waits for their window: sleep until the first one opens.
      phase = 'outside-window';
      windowOpensAt = chunkOpening;
      await waitFor(() => state.paused || stopWaiting() || canStartSend(), chunkOpening - Date.now());
      continue;
    }
    if (!canStartSend()) {
      // While sends wait for room, the next page is read, so no read stands between that room and a send.
      // Runs recorded before this read only when they could send.
      if (!unsentPendingChunk() && canReadMore() && patched('read-ahead-while-waiting')) {
        await readPage();
        continue;
      }
      phase = throttled() ? 'throttled' : 'sending';
      await waitFor(() => canStartSend() || !hasMoreToSend() || state.paused || stopWaiting());
      continue;
    }

    phase = 'sending';
    const chunk = unsentPendingChunk() ?? (await readPage());
    // Reading awaits activities (the audience, the suppression list): a pause or cancel that came meanwhile
    // holds the chunk back, pending. Runs recorded before this replay as they were.
    const stopped = state.paused || state.cancelled;
    const held = stopped && patched('hold-chunk-read-while-stopped');
    if (chunk && !held && (!localHours || chunkOpensAt(chunk) === null)) startSending(chunk);
  }

  finished = true;
  operators.show(progress());
  await releaseMessages();
  await condition(allHandlersFinished);
  return resultOf(state, new Date(Date.now()).toISOString());
}

/** Runs started before the default rose from 4 keep 4, so their histories replay. */
function defaultChunksInFlight(): number {
  return patched('chunks-in-flight-8') ? CAMPAIGN_DEFAULTS.chunksInFlight : 4;
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

function isWindowClosed(error: unknown): boolean {
  return (
    error instanceof ActivityFailure &&
    error.cause instanceof ApplicationFailure &&
    error.cause.type === SEND_WINDOW_CLOSED
  );
}
