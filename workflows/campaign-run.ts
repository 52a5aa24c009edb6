/**
 * One run of a campaign: its state and what the loop tracks beside it (sends in flight, the failure to act
 * on, the phase operators see), the handlers of its signals, query and updates, and one method per step of
 * `nextStep`. The workflow function (campaign.ts) tells the story; the rules of each step live here and in
 * campaign-state.ts.
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
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';
import { nextWindowOpening, SEND_WINDOW_CLOSED, windowOfChunk } from '../src/definitions/send-window.js';
import { runKeyOf } from '../src/definitions/workflow-ids.js';
import { OperatorView } from './campaign-operators.js';
import { CAMPAIGN_PATCHES } from './campaign-patches.js';
import {
  type AudienceCursor,
  type CampaignState,
  type CampaignTurn,
  EarlyOutcomes,
  initialState,
  Outstanding,
  type PendingChunk,
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
import { onMessageOutcomes, releaseMessages, settleOpenMessages } from './message-outcomes.js';
import { countMessageOutcomes } from './metrics.js';

/** Overdue messages settled per turn of the loop, so continue-as-new is never held off for long. */
const OVERDUE_PER_TURN = 64;

/** The limits a run works within, from the input and msgflow's defaults. */
function limitsOf(input: CampaignInput, chunkSize: number) {
  return {
    maxOutstanding: Math.max(input.maxOutstanding ?? defaultOutstanding(), chunkSize),
    maxEventsPerRun: input.maxEventsPerRun ?? CAMPAIGN_DEFAULTS.maxEventsPerRun,
    chunksInFlight: input.chunksInFlight ?? defaultChunksInFlight(),
    waitWindowMs: input.waitWindowMs ?? DEFAULT_WAIT_WINDOW_MS,
  };
}

/** Runs started before the default rose from 5,000 keep 5,000, so their histories replay. */
function defaultOutstanding(): number {
  return patched(CAMPAIGN_PATCHES.maxOutstanding10000) ? CAMPAIGN_DEFAULTS.maxOutstanding : 5000;
}

/** Runs started before the default rose from 4 keep 4, so their histories replay. */
function defaultChunksInFlight(): number {
  return patched(CAMPAIGN_PATCHES.chunksInFlight8) ? CAMPAIGN_DEFAULTS.chunksInFlight : 4;
}

export class CampaignRun implements CampaignTurn {
  readonly state: CampaignState;
  private readonly campaign: CampaignContext;
  private readonly limits: ReturnType<typeof limitsOf>;
  private readonly outstanding: Outstanding;
  private readonly operators = new OperatorView();
  private phase: CampaignPhase;
  private nextOpening: number | null = null;
  private finished = false;
  /** Chunk sends in progress: chunk number → recipients. */
  private readonly sending = new Map<number, number>();
  /** A failure no retry fixed, acted on once the sends in progress have answered. */
  private failure: { what: string; error: unknown } | null = null;
  private readonly early = new EarlyOutcomes<MessageOutcome>();
  /** A window in each recipient's local hours: each chunk waits for its own zone's window. */
  private readonly localHours: boolean;
  /** Per zone and instant: a page of personal texts queues up to a thousand chunks in a handful of zones. */
  private readonly openings = new Map<string, number | null>();

  constructor(
    private readonly input: CampaignInput,
    carried: CampaignState | undefined,
  ) {
    const chunkSize = input.chunkSize ?? CAMPAIGN_DEFAULTS.chunkSize;
    this.campaign = { campaignId: runKeyOf(workflowInfo()), input, chunkSize };
    this.limits = limitsOf(input, chunkSize);
    this.state = carried ?? initialState(new Date(Date.now()).toISOString(), audienceCursorOf(input));
    this.state.runs += 1;
    this.outstanding = Outstanding.from(this.state.outstanding);
    this.phase = this.state.preflightDone ? 'sending' : 'preflight';
    this.localHours = inRecipientZones(input);
  }

  /** Handlers first, synchronously: signals buffered before this run started are delivered as soon as they exist. */
  answerSignalsQueriesAndUpdates(): void {
    onMessageOutcomes((outcomes) => this.settle(outcomes));
    setHandler(campaignProgressQuery, () => this.progress());
    const mustBeRunning =
      (action: string) =>
      (..._args: unknown[]) => {
        if (this.finished) throw new Error(`cannot ${action}: the campaign has finished`);
        if (this.state.cancelled && action !== 'cancel') throw new Error(`cannot ${action}: the campaign is cancelled`);
      };
    setHandler(pauseCampaignUpdate, (request) => this.pause(request?.reason?.trim() || 'paused by an operator'), {
      validator: mustBeRunning('pause'),
    });
    setHandler(resumeCampaignUpdate, () => this.resume(), { validator: mustBeRunning('resume') });
    setHandler(cancelCampaignUpdate, () => this.cancel(), { validator: mustBeRunning('cancel') });
  }

  // --- The operators' view and their updates ---

  progress() {
    const { phase, nextOpening } = this;
    const opensAt = phase === 'outside-window' && nextOpening !== null ? new Date(nextOpening).toISOString() : null;
    return progressOf(this.state, this.outstanding, this.currentPhase(), opensAt);
  }

  private currentPhase(): CampaignPhase {
    if (this.finished) return this.state.cancelled ? 'cancelled' : 'completed';
    if (this.phase === 'preflight') return this.phase;
    if (this.state.cancelled || !this.moreToSend()) return 'draining';
    if (this.state.paused) return 'paused';
    return this.phase;
  }

  private pause(reason: string) {
    this.state.paused = true;
    this.state.pausedReason = reason;
    return this.progress();
  }

  private resume() {
    this.state.paused = false;
    this.state.pausedReason = null;
    return this.progress();
  }

  private cancel() {
    this.state.cancelled = true;
    return this.progress();
  }

  // --- What a turn of the loop asks (CampaignTurn) ---

  shouldContinueAsNew(): boolean {
    return workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= this.limits.maxEventsPerRun;
  }
  sendsInFlight(): number {
    return this.sending.size;
  }
  overdue(): string[] {
    return this.outstanding.overdue(Date.now(), OVERDUE_PER_TURN);
  }
  failed(): boolean {
    return this.failure !== null;
  }
  cancelled(): boolean {
    return this.state.cancelled;
  }
  moreToSend(): boolean {
    return this.state.pendingChunks.length > 0 || this.audienceRemains();
  }
  awaited(): number {
    return this.outstanding.size;
  }
  paused(): boolean {
    return this.state.paused;
  }
  windowOpensAt(): number | null {
    const { sendWindow } = this.input;
    return sendWindow && !this.localHours ? nextWindowOpening(Date.now(), sendWindow) : null;
  }
  chunksOpenAt(): number | null {
    if (!this.localHours || this.unsentPendingChunk() || this.canReadMore()) return null;
    const times = this.state.pendingChunks
      .filter((c) => !this.sending.has(c.number))
      .map((c) => this.chunkOpensAt(c))
      .filter((t): t is number => t !== null);
    return times.length ? Math.min(...times) : null;
  }
  canStartSend(): boolean {
    return (
      this.sending.size < this.limits.chunksInFlight &&
      (this.unsentPendingChunk() !== undefined || this.canReadMore()) &&
      !this.throttled()
    );
  }
  mayReadAhead(): boolean {
    // Runs recorded before reading ahead read only when they could send.
    return !this.unsentPendingChunk() && this.canReadMore() && patched(CAMPAIGN_PATCHES.readAheadWhileWaiting);
  }
  throttled(): boolean {
    const committed = this.committed();
    return committed > 0 && committed + this.campaign.chunkSize > this.limits.maxOutstanding;
  }

  private audienceRemains(): boolean {
    const { audience } = this.state;
    return audience.kind === 'list' ? audience.remaining.length > 0 : !audience.exhausted;
  }

  private chunkOpensAt(chunk: PendingChunk): number | null {
    const window = windowOfChunk(this.input.sendWindow, chunk.timeZone);
    if (!window) return null;
    const key = `${Date.now()} ${window.timeZone}`;
    if (!this.openings.has(key)) {
      if (this.openings.size > 64) this.openings.clear();
      this.openings.set(key, nextWindowOpening(Date.now(), window));
    }
    return this.openings.get(key)!;
  }

  private unsentPendingChunk(): PendingChunk | undefined {
    return this.state.pendingChunks.find(
      (c) => !this.sending.has(c.number) && (!this.localHours || this.chunkOpensAt(c) === null),
    );
  }

  /** Reading ahead for later windows is bounded like the outstanding messages are. */
  private canReadMore(): boolean {
    return (
      this.audienceRemains() &&
      (!this.localHours || waitingRecipients(this.state, this.sending) < this.limits.maxOutstanding)
    );
  }

  /** Sent and awaiting an outcome, or being sent: what `maxOutstanding` bounds. */
  private committed(): number {
    return this.outstanding.size + [...this.sending.values()].reduce((a, b) => a + b, 0);
  }

  // --- The steps ---

  /** Checks the audience and the wallet; the first page is read meanwhile (nothing is sent before the check passes). */
  async preflight(): Promise<void> {
    // Runs recorded before this did one step after the other, and replay so.
    const atOnce = patched(CAMPAIGN_PATCHES.preflightAtOnce);
    const firstRead = atOnce && this.input.audience.type !== 'inline' ? this.readPage() : undefined;
    try {
      await preflight(this.campaign, this.state, atOnce);
    } catch (error) {
      this.onFailure('the pre-flight check', error);
    }
    await firstRead;
    this.state.preflightDone = true;
    this.phase = 'sending';
  }

  /** Waits for `done`, a reason to continue as new, the next outcome deadline, an operator view update or `timeoutMs`. */
  async waitFor(done: () => boolean, timeoutMs?: number): Promise<void> {
    const deadline = this.outstanding.nextDeadline();
    const timeouts = [
      timeoutMs,
      deadline === null ? undefined : deadline - Date.now(),
      this.operators.show(this.progress()),
    ];
    const timeout = timeouts.filter((t): t is number => t !== undefined && t !== null);
    const wake = () => done() || this.shouldContinueAsNew();
    if (timeout.length) await condition(wake, Math.max(1, Math.min(...timeout)));
    else await condition(wake);
  }

  async sendsAnswered(): Promise<void> {
    await condition(() => this.sending.size === 0);
  }

  /** No final event within the wait window: the store once more, then the provider, decide. */
  async settleOverdue(ids: string[]): Promise<void> {
    this.settle(await settleOpenMessages(ids));
  }

  actOnFailure(): void {
    const { what, error } = this.failure!;
    this.failure = null;
    this.onFailure(what, error);
  }

  /** Nothing more to send: waits for the outcomes still awaited and the sends still answering. */
  async drain(): Promise<void> {
    await this.waitFor(() => (this.outstanding.size === 0 && this.sending.size === 0) || this.failure !== null);
  }

  async whilePaused(): Promise<void> {
    await this.waitFor(() => !this.state.paused || this.stopWaiting());
  }

  /** Outside the send window; with `perChunk`, every recipient read so far waits for their own. */
  async untilWindowOpens(opensAt: number, perChunk: boolean): Promise<void> {
    this.phase = 'outside-window';
    this.nextOpening = opensAt;
    const done = perChunk
      ? () => this.state.paused || this.stopWaiting() || this.canStartSend()
      : () => this.state.paused || this.stopWaiting();
    await this.waitFor(done, opensAt - Date.now());
  }

  async untilRoom(throttled: boolean): Promise<void> {
    this.phase = throttled ? 'throttled' : 'sending';
    await this.waitFor(() => this.canStartSend() || !this.moreToSend() || this.state.paused || this.stopWaiting());
  }

  /** Starts sending the next chunk (read first when none is pending), not awaited: others may start meanwhile. */
  async sendNextChunk(): Promise<void> {
    this.phase = 'sending';
    const chunk = this.unsentPendingChunk() ?? (await this.readPage());
    // Reading awaits activities (the audience, the suppression list): a pause or cancel that came meanwhile
    // holds the chunk back, pending. Runs recorded before this replay as they were.
    const stopped = this.state.paused || this.state.cancelled;
    const held = stopped && patched(CAMPAIGN_PATCHES.holdChunkReadWhileStopped);
    if (chunk && !held && (!this.localHours || this.chunkOpensAt(chunk) === null)) this.startSending(chunk);
  }

  /** Reads the next page into the pending chunks and returns its first; a failure waits for the loop to act. */
  async readPage(): Promise<PendingChunk | null> {
    try {
      return await readNextChunk(this.campaign, this.state);
    } catch (error) {
      this.failure ??= { what: 'reading the audience', error };
      return null;
    }
  }

  async continueAsNew(): Promise<never> {
    await condition(allHandlersFinished);
    this.state.outstanding = this.outstanding.toGroups();
    return await continueAsNew<(input: CampaignInput, state: CampaignState) => Promise<CampaignResult>>(
      withoutInlineList(this.input),
      this.state,
    );
  }

  async finish(): Promise<CampaignResult> {
    this.finished = true;
    this.operators.show(this.progress());
    await releaseMessages();
    await condition(allHandlersFinished);
    return resultOf(this.state, new Date(Date.now()).toISOString());
  }

  private stopWaiting(): boolean {
    return this.failure !== null || this.state.cancelled;
  }

  private settle(outcomes: MessageOutcome[]): void {
    const counted = recordOutcomes(this.state, this.outstanding, outcomes);
    countMessageOutcomes(counted);
    // Not awaited (yet): the answer of a chunk send in flight may still name them.
    if (this.sending.size > 0 && counted.length < outcomes.length) this.early.hold(outcomes, counted);
  }

  /**
   * A failure no retry fixed. Before anything was sent the campaign fails, with the reason; after, it pauses
   * with the reason, so an operator can fix the cause (top up, approve the sender) and resume, or cancel.
   */
  private onFailure(what: string, error: unknown): void {
    if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
    const cause = error.cause instanceof ApplicationFailure ? error.cause : undefined;
    const type = cause?.type ?? CAMPAIGN_FAILURES.failed;
    const message = cause?.message ?? error.cause?.message ?? error.message;
    if (this.state.sent === 0) {
      throw ApplicationFailure.create({
        type,
        message: `the campaign stopped before sending anything: ${what} failed: ${message}`,
        nonRetryable: true,
      });
    }
    this.pause(`${type}: ${message} (while ${what}); fix the cause, then resume, or cancel`);
  }

  /** Starts sending a chunk, not awaited: the loop may start others while it is in flight. */
  private startSending(chunk: PendingChunk): void {
    this.sending.set(chunk.number, chunk.recipients.length);
    const mayHaveBeenSent = chunk.attempted === true;
    chunk.attempted = true;
    sendChunk(this.campaign, this.state, chunk, mayHaveBeenSent)
      .then(
        (sent) => {
          recordChunkSent(this.state, this.outstanding, chunk.number, sent, Date.now() + this.limits.waitWindowMs);
          this.settle([...sent.alreadyFinal, ...this.early.claim(sent.providerMessageIds)]);
        },
        (error: unknown) => {
          // Its window closed before the request was made: nothing was sent, it waits for the next opening.
          if (isWindowClosed(error)) chunk.attempted = mayHaveBeenSent;
          // Otherwise the chunk stays pending: resuming sends it again under the same key.
          else this.failure ??= { what: `sending chunk ${chunk.number}`, error };
        },
      )
      .finally(() => {
        this.sending.delete(chunk.number);
        if (this.sending.size === 0) this.early.clear();
      });
  }
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
