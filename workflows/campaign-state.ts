/**
 * A campaign's state: everything a run hands to the next when it continues as new, kept bounded at any
 * audience size (counts, a cursor, at most `maxOutstanding` message ids and capped samples). Pure code.
 */
import type {
  CampaignPhase,
  CampaignProgress,
  CampaignResult,
  CostEstimate,
  InvalidRecipient,
  StateCounts,
} from '../src/api/campaign-io.js';
import { FINAL_STATUSES, isFinalStatus, MAX_REPORTED_ITEMS } from '../src/api/constants.js';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';

/** Where reading the audience stands: the remaining inline list, or a source's opaque cursor. */
export type AudienceCursor =
  { kind: 'list'; remaining: string[] } | { kind: 'source'; cursor: string | null; exhausted: boolean };

/**
 * A chunk read but not yet accepted by the provider: one request's recipients; its number fixes its
 * idempotency key. A personal campaign's chunk names the audience page it came from, where its text is rendered.
 */
export interface PendingChunk {
  number: number;
  recipients: string[];
  page?: PageRef;
  /** For a window in each recipient's local hours: the zone of this chunk's recipients. */
  timeZone?: string;
  /** A send was started under this chunk's key: it may have reached the provider, so it is completed. */
  attempted?: boolean;
}

/** An audience page: the cursor it was read from and the position of its first entry. */
export interface PageRef {
  cursor: string | null;
  firstIndex: number;
}

export interface CampaignState {
  startedAt: string;
  runs: number;
  preflightDone: boolean;
  estimate: CostEstimate | null;
  /** Valid unique recipients known from pre-flight (null without it). */
  audienceTotal: number | null;
  audience: AudienceCursor;
  /** Raw audience entries consumed so far (the index of the next one). */
  entriesRead: number;
  valid: number;
  duplicates: number;
  /** Recipients skipped because they were on the suppression list when their chunk was read (absent in runs before it). */
  suppressed?: number;
  invalidCount: number;
  invalidSample: InvalidRecipient[];
  /** Chunks read but not yet accepted, in order; a run hands them on, and they are sent under the same keys. */
  pendingChunks: PendingChunk[];
  /** The next chunk number: global across runs, so idempotency keys never repeat. */
  nextChunk: number;
  chunksSent: number;
  sent: number;
  cost: number;
  currency: string | null;
  counts: StateCounts;
  /** Sent messages without an outcome yet, grouped by the deadline after which the campaign stops waiting. */
  outstanding: Array<{ deadline: number; ids: string[] }>;
  notFinalCount: number;
  notFinalIds: string[];
  paused: boolean;
  pausedReason: string | null;
  cancelled: boolean;
}

export function initialState(startedAt: string, audience: AudienceCursor): CampaignState {
  return {
    startedAt,
    runs: 0,
    preflightDone: false,
    estimate: null,
    audienceTotal: null,
    audience,
    entriesRead: 0,
    valid: 0,
    duplicates: 0,
    suppressed: 0,
    invalidCount: 0,
    invalidSample: [],
    pendingChunks: [],
    nextChunk: 0,
    chunksSent: 0,
    sent: 0,
    cost: 0,
    currency: null,
    counts: Object.fromEntries(FINAL_STATUSES.map((s) => [s, 0])),
    outstanding: [],
    notFinalCount: 0,
    notFinalIds: [],
    paused: false,
    pausedReason: null,
    cancelled: false,
  };
}

/** The messages awaiting an outcome, each with the deadline after which it counts as `unknown`. */
export class Outstanding {
  private readonly deadlines = new Map<string, number>();

  static from(groups: CampaignState['outstanding']): Outstanding {
    const outstanding = new Outstanding();
    for (const { deadline, ids } of groups) outstanding.add(ids, deadline);
    return outstanding;
  }

  get size(): number {
    return this.deadlines.size;
  }

  add(ids: string[], deadline: number): void {
    for (const id of ids) this.deadlines.set(id, deadline);
  }

  /** True the first time an id's outcome arrives; false for a duplicate or an id not sent by this campaign. */
  settle(id: string): boolean {
    return this.deadlines.delete(id);
  }

  /** Up to `limit` ids whose deadline is at or before `now`; they stay awaited until their outcome is recorded. */
  overdue(now: number, limit: number): string[] {
    const overdue: string[] = [];
    for (const [id, deadline] of this.deadlines) {
      if (overdue.length >= limit) break;
      if (deadline <= now) overdue.push(id);
    }
    return overdue;
  }

  nextDeadline(): number | null {
    let next: number | null = null;
    for (const deadline of this.deadlines.values()) {
      if (next === null || deadline < next) next = deadline;
    }
    return next;
  }

  toGroups(): CampaignState['outstanding'] {
    const groups = new Map<number, string[]>();
    for (const [id, deadline] of this.deadlines) {
      const ids = groups.get(deadline) ?? [];
      ids.push(id);
      groups.set(deadline, ids);
    }
    return [...groups].map(([deadline, ids]) => ({ deadline, ids }));
  }
}

/**
 * Outcomes signalled for messages the campaign does not await yet: a chunk's send activity records its
 * messages in the store before it completes, so their outcomes can be signalled before the workflow sees
 * the send's answer (the SDK may even hand the signal over first within one workflow task). Held while
 * sends are in flight and claimed when a chunk's answer names them; what no answer claims is cleared once
 * no send is in flight.
 */
export class EarlyOutcomes<T extends { providerMessageId: string }> {
  private readonly held = new Map<string, T>();

  get size(): number {
    return this.held.size;
  }

  /** Holds the outcomes of `outcomes` that are not among `counted`. */
  hold(outcomes: readonly T[], counted: readonly T[]): void {
    const done = new Set(counted.map((o) => o.providerMessageId));
    for (const outcome of outcomes) {
      if (!done.has(outcome.providerMessageId)) this.held.set(outcome.providerMessageId, outcome);
    }
  }

  /** Takes the held outcomes of these messages. */
  claim(ids: readonly string[]): T[] {
    return ids.flatMap((id) => {
      const outcome = this.held.get(id);
      this.held.delete(id);
      return outcome ? [outcome] : [];
    });
  }

  clear(): void {
    this.held.clear();
  }
}

/**
 * Queues a page's recipients as chunks, one per group (consecutive recipients sharing a text and zone; all
 * of them when no groups are given), numbered in order. Returns the new chunks.
 */
export function queueChunks(
  state: CampaignState,
  recipients: string[],
  groups: ReadonlyArray<{ size: number; timeZone?: string }> = [{ size: recipients.length }],
  page?: PageRef,
): PendingChunk[] {
  const chunks: PendingChunk[] = [];
  let from = 0;
  for (const { size, timeZone } of groups) {
    if (size <= 0) continue;
    const chunk: PendingChunk = { number: state.nextChunk++, recipients: recipients.slice(from, from + size) };
    if (page) chunk.page = page;
    if (timeZone) chunk.timeZone = timeZone;
    chunks.push(chunk);
    from += size;
  }
  state.pendingChunks.push(...chunks);
  return chunks;
}

/** Group sizes that cut `count` recipients into chunks of at most `chunkSize`. */
export function chunkSizes(count: number, chunkSize: number): Array<{ size: number }> {
  const sizes: Array<{ size: number }> = [];
  for (let from = 0; from < count; from += chunkSize) sizes.push({ size: Math.min(chunkSize, count - from) });
  return sizes;
}

/**
 * A page's recipients and their groups (consecutive runs, as `queueChunks` takes them; all of them as one
 * group when absent) without the suppressed ones; a group left empty keeps its place with size 0.
 */
export function withoutSuppressed<G extends { size: number }>(
  recipients: string[],
  groups: readonly G[] | undefined,
  suppressed: readonly string[],
): { recipients: string[]; groups: Array<G | { size: number }> } {
  const all: ReadonlyArray<G | { size: number }> = groups ?? [{ size: recipients.length }];
  if (suppressed.length === 0) return { recipients, groups: [...all] };
  const left = new Set(suppressed);
  const kept: string[] = [];
  let from = 0;
  const keptGroups = all.map((group) => {
    const members = recipients.slice(from, from + group.size).filter((r) => !left.has(r));
    from += group.size;
    kept.push(...members);
    return { ...group, size: members.length };
  });
  return { recipients: kept, groups: keptGroups };
}

/** Recipients read but not yet being sent or sent: what reading ahead for later windows is bounded by. */
export function waitingRecipients(state: CampaignState, sending: ReadonlyMap<number, number>): number {
  return state.pendingChunks.reduce((n, c) => (sending.has(c.number) ? n : n + c.recipients.length), 0);
}

/** A chunk the provider accepted: its messages now await their outcome until `deadline`. */
export function recordChunkSent(
  state: CampaignState,
  outstanding: Outstanding,
  chunkNumber: number,
  sent: { providerMessageIds: string[]; cost: number; currency: string },
  deadline: number,
): void {
  state.pendingChunks = state.pendingChunks.filter((c) => c.number !== chunkNumber);
  state.chunksSent += 1;
  state.sent += sent.providerMessageIds.length;
  state.cost += sent.cost;
  state.currency = sent.currency;
  outstanding.add(sent.providerMessageIds, deadline);
}

/**
 * Counts each outcome the first time it arrives for a message still awaited; duplicates and ids this
 * campaign does not await change nothing. Returns the outcomes that counted.
 */
export function recordOutcomes<T extends Pick<MessageOutcome, 'providerMessageId' | 'status'>>(
  state: CampaignState,
  outstanding: Outstanding,
  outcomes: readonly T[],
): T[] {
  const counted = outcomes.filter((outcome) => outstanding.settle(outcome.providerMessageId));
  for (const outcome of counted) recordOutcome(state, outcome);
  return counted;
}

/** Counts one message's outcome: its final state, or its last known state when it never reached one. */
export function recordOutcome(
  state: CampaignState,
  outcome: Pick<MessageOutcome, 'providerMessageId' | 'status'>,
): void {
  state.counts[outcome.status] = (state.counts[outcome.status] ?? 0) + 1;
  if (!isFinalStatus(outcome.status)) recordNotFinal(state, outcome.providerMessageId);
}

export function recordNotFinal(state: CampaignState, id: string): void {
  state.notFinalCount += 1;
  if (state.notFinalIds.length < MAX_REPORTED_ITEMS) state.notFinalIds.push(id);
}

export function recordSuppressed(state: CampaignState, count: number): void {
  state.suppressed = (state.suppressed ?? 0) + count;
}

export function recordInvalid(state: CampaignState, invalid: InvalidRecipient[]): void {
  state.invalidCount += invalid.length;
  const room = MAX_REPORTED_ITEMS - state.invalidSample.length;
  if (room > 0) state.invalidSample.push(...invalid.slice(0, room));
}

/** What the `progress` query answers; `phase` and `windowOpensAt` come from the running loop. */
export function progressOf(
  state: CampaignState,
  outstanding: Outstanding,
  phase: CampaignPhase,
  windowOpensAt: string | null,
): CampaignProgress {
  return {
    phase,
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
    suppressed: state.suppressed ?? 0,
    queued: outstanding.size,
    counts: { ...state.counts },
    cost: state.cost,
    currency: currencyOf(state),
    chunks: state.chunksSent,
    estimate: state.estimate,
    windowOpensAt,
    runs: state.runs,
    startedAt: state.startedAt,
  };
}

export function resultOf(state: CampaignState, completedAt: string): CampaignResult {
  return {
    cancelled: state.cancelled,
    sent: state.sent,
    suppressed: state.suppressed ?? 0,
    counts: { ...state.counts },
    cost: state.cost,
    currency: currencyOf(state),
    chunks: state.chunksSent,
    duplicates: state.duplicates,
    invalid: { count: state.invalidCount, recipients: state.invalidSample },
    notFinal: { count: state.notFinalCount, ids: state.notFinalIds },
    estimate: state.estimate,
    runs: state.runs,
    startedAt: state.startedAt,
    completedAt,
  };
}

/** One line for the Temporal UI's "current details": where the campaign stands, without a query. */
export function detailsOf(progress: CampaignProgress): string {
  const final = Object.entries(progress.counts)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${status} ${n}`)
    .join(', ');
  const total = progress.audience.total ?? progress.audience.valid;
  return [
    `**${progress.phase}**${progress.pausedReason ? ` (${progress.pausedReason})` : ''}`,
    `sent ${progress.sent} of ${total}, awaiting ${progress.queued}${progress.suppressed ? `, suppressed ${progress.suppressed}` : ''}`,
    `final: ${final || 'none yet'}`,
    `cost ${progress.cost}${progress.currency ? ` ${progress.currency}` : ''}, run ${progress.runs}`,
  ].join('\n\n');
}

function currencyOf(state: CampaignState): string | null {
  return state.currency ?? state.estimate?.currency ?? null;
}

/**
 * What one turn of the campaign loop asks of the running campaign. `nextStep` asks in the order below and
 * stops at the first answer that decides, so a question is only asked when its answer matters.
 */
export interface CampaignTurn {
  /** The history is long enough to hand over to a new run. */
  shouldContinueAsNew(): boolean;
  /** Chunk sends in progress. */
  sendsInFlight(): number;
  /** Messages past their wait window, up to a turn's share. */
  overdue(): string[];
  /** A failure no retry fixed is waiting to be acted on. */
  failed(): boolean;
  cancelled(): boolean;
  /** Chunks pending or recipients left to read. */
  moreToSend(): boolean;
  /** Messages sent and awaiting an outcome. */
  awaited(): number;
  paused(): boolean;
  /** When the campaign's send window opens next, or null while it is open (or there is none). */
  windowOpensAt(): number | null;
  /** In recipients' local hours, when every recipient read so far waits: when the first window opens. */
  chunksOpenAt(): number | null;
  canStartSend(): boolean;
  /** Nothing can be sent yet, but the next page may be read meanwhile. */
  mayReadAhead(): boolean;
  /** The messages awaiting an outcome leave no room for another chunk. */
  throttled(): boolean;
}

export type CampaignStep =
  | { kind: 'continue-as-new' }
  | { kind: 'sends-before-continuing' }
  | { kind: 'settle-overdue'; ids: string[] }
  | { kind: 'sends-before-failure' }
  | { kind: 'act-on-failure' }
  | { kind: 'finish' }
  | { kind: 'drain' }
  | { kind: 'paused' }
  | { kind: 'outside-window'; opensAt: number; perChunk: boolean }
  | { kind: 'read-ahead' }
  | { kind: 'wait-for-room'; throttled: boolean }
  | { kind: 'send' };

/** The campaign's next step: the rules of its loop in the order they take precedence. */
export function nextStep(turn: CampaignTurn): CampaignStep {
  if (turn.shouldContinueAsNew()) {
    // Sends in progress answer in this run (their messages are recorded here); nothing new starts.
    if (turn.sendsInFlight() > 0) return { kind: 'sends-before-continuing' };
    if (!turn.failed()) return { kind: 'continue-as-new' };
  }
  const overdue = turn.overdue();
  if (overdue.length > 0) return { kind: 'settle-overdue', ids: overdue };
  // Whether the campaign fails or pauses depends on what was sent: decide once every send has answered.
  if (turn.failed()) return turn.sendsInFlight() > 0 ? { kind: 'sends-before-failure' } : { kind: 'act-on-failure' };
  if (turn.cancelled() || !turn.moreToSend()) {
    return turn.awaited() === 0 && turn.sendsInFlight() === 0 ? { kind: 'finish' } : { kind: 'drain' };
  }
  if (turn.paused()) return { kind: 'paused' };
  const opensAt = turn.windowOpensAt();
  if (opensAt !== null) return { kind: 'outside-window', opensAt, perChunk: false };
  const chunksOpenAt = turn.chunksOpenAt();
  if (chunksOpenAt !== null) return { kind: 'outside-window', opensAt: chunksOpenAt, perChunk: true };
  if (turn.canStartSend()) return { kind: 'send' };
  return turn.mayReadAhead() ? { kind: 'read-ahead' } : { kind: 'wait-for-room', throttled: turn.throttled() };
}
