/**
 * The relay: tells workflows the outcomes the message store holds for them and has not told them yet (the
 * outbox, src/store/outbox.ts). The ingress answers a delivery as soon as the store recorded it and wakes
 * its relay in-process; the relay also sweeps the store for the rest (another ingress's crash, an outage).
 *
 * Each workflow gets one signal with all of its untold outcomes, then they are marked told. A quiet workflow
 * (a single send, an OTP) is told at once, ahead of any backlog; a busy one (a campaign) at most
 * `signalsPerSecond` times a second, however fast its messages settle. Several relays (one per ingress) share
 * the work through claims in the store.
 *
 * The store is the truth, so the relay's memory is bounded whatever the backlog: it holds at most `maxDue`
 * workflows to tell and leaves the rest to its sweep, which walks the untold outcomes oldest first with a
 * cursor. The backlog is told oldest first: one round is chosen at a time, each of the oldest due workflows
 * that are in no round, once the round before has claimed (what its outcome budget put off goes first in the
 * next); a workflow's round that did not get its signal through sends it back to the front. Quiet workflows
 * woken in-process go in a round of their own, ahead of the backlog, never in one with it.
 *
 * Only Temporal being out of reach or overloaded pauses all telling (with a growing backoff); a
 * workflow whose signal Temporal refuses waits out a backoff of its own, kept in the store, and after
 * SLOW_LANE_AFTER refusals in a row is tried once every `slowLaneMs`, never dropped.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Client } from '@temporalio/client';
import { MAX_OUTSTANDING } from '../api/constants.js';
import { type MessageOutcome, messageOutcomesSignal } from '../definitions/message-outcomes.js';
import { type Logger, silentLogger } from '../log.js';
import {
  type Claimed,
  type ClaimedOutcomes,
  type MessageStore,
  outcomeFromStore,
  type UntoldPosition,
  type WaiterOutcomes,
} from '../store/index.js';
import { type Attributes, inSpan, linkTo, messageIdAttributes } from '../tracing/spans.js';
import { type SignalFailure, signalFailureOf } from './signal-failure.js';

export interface RelayOptions {
  store: Pick<MessageStore, 'outbox'>;
  client: Client;
  /** Signals a second at most, per workflow (default 2). */
  signalsPerSecond?: number;
  /** How long a claim holds if this relay dies while telling (default 15 s): the bound on a takeover. */
  leaseMs?: number;
  /** How often the store is swept for outcomes this relay was not woken for (default 1 s). */
  sweepMs?: number;
  /** Most outcomes in one signal (default 10,000: a campaign's largest window, about 1.3 MB). */
  maxOutcomesPerSignal?: number;
  /** Workflows claimed together, in one store transaction (default 100). */
  workflowsPerRound?: number;
  /**
   * Outcomes in rounds of the backlog on their way at once, at most (default 10,000: one full signal; a workflow
   * with more goes alone): no claim holds the store for long, and a quiet send's signal waits behind at most one
   * large one.
   */
  outcomesInFlight?: number;
  /** Rounds in progress at once (default 4), besides the one for quiet workflows. */
  rounds?: number;
  /** Signal calls in flight at once within a round (default 16). */
  signalsInFlight?: number;
  /** Deadline of one signal call (default 5 s, at most a third of the lease). */
  callTimeoutMs?: number;
  /** Longest wait between attempts while Temporal or the store is unreachable (default 5 s). */
  maxBackoffMs?: number;
  /** How often a workflow whose signals keep being refused is tried again (default 60 s). */
  slowLaneMs?: number;
  /** Workflows held in memory to tell (default 10,000); the sweep finds the rest in the store. */
  maxDue?: number;
  /** Unique per relay (default: host, process id and a random part). */
  owner?: string;
  logger?: Logger;
  /** Called once Temporal accepted a signal, with the number of outcomes it carried and its workflow (metrics). */
  onSignal?(outcomes: number, workflowId: string): void;
  /** Test only: called once Temporal accepted a signal, before its outcomes are marked told. */
  afterSignalAccepted?(workflowId: string): void;
}

export interface Relay {
  /**
   * These workflows have new untold outcomes (the ingress just recorded them). One with `allFinal` waits for
   * nothing else: it is due at once, and the store lets it be told once ahead of the rate rule.
   */
  wake(waiting: Iterable<Pick<WaiterOutcomes, 'workflowId' | 'allFinal'>>): void;
  /** Resolves once nothing is due or being told (tests). */
  idle(): Promise<void>;
  /** Workflows this relay remembers (to tell, resting, told lately): bounded, whatever the store's backlog. */
  size(): number;
  /** Stops sweeping and waits for the rounds in progress. */
  close(): Promise<void>;
}

/**
 * A campaign's largest window, so one signal can carry all it may have outstanding (its last outcomes
 * included, told at once); about 130 bytes of JSON each, 1.3 MB, within Temporal's 2 MB payload limit.
 */
const MAX_OUTCOMES_PER_SIGNAL = MAX_OUTSTANDING;
/** A signal's JSON at most: Temporal refuses a payload over 2 MB by default. */
const MAX_SIGNAL_BYTES = 1_800_000;
const FIRST_BACKOFF_MS = 250;
/** How often Temporal is asked whether it is back while a send waits for it. */
const WAITING_PROBE_MS = 100;
/** Refusals in a row after which a workflow is tried only once every slowLaneMs. */
export const SLOW_LANE_AFTER = 5;
/** A workflow another relay holds is asked for again after this at the soonest (not in a tight loop). */
const HELD_RETRY_MS = 250;
/** Claims idle this long are deleted by the sweep now and then. */
const FORGET_CLAIMS_AFTER_MS = 60_000;
/** How long the probe of a server that failed a whole round may take. */
const PROBE_TIMEOUT_MS = 2_000;

/** `untried`: not sent, because an earlier signal of its round found Temporal unreachable or overloaded. */
type Result = { kind: 'told' | 'untried' } | { kind: SignalFailure; reason: string };

/** How long a workflow refused `refusals` times in a row waits before its next try. */
export function refusalBackoffMs(refusals: number, slowLaneMs: number): number {
  if (refusals >= SLOW_LANE_AFTER) return slowLaneMs;
  return Math.min(slowLaneMs, FIRST_BACKOFF_MS * 2 ** (refusals - 1));
}

export function startRelay(options: RelayOptions): Relay {
  return new OutboxRelay(options);
}

class OutboxRelay implements Relay {
  private readonly store: Pick<MessageStore, 'outbox'>;
  private readonly owner: string;
  private readonly intervalMs: number;
  private readonly leaseMs: number;
  private readonly slowLaneMs: number;
  private readonly maxDue: number;
  private readonly log: Logger;
  /** Workflows to tell, with the earliest time to try (the rate rule, a backoff); at most maxDue. */
  private readonly due = new Map<string, number>();
  private readonly inFlight = new Set<string>();
  /** When this relay last told each workflow; forgotten once older than the interval. */
  private readonly lastTold = new Map<string, number>();
  /** Workflows this relay saw refused, until their next try (wakes before then would only be held). */
  private readonly resting = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  /** Woken in-process since their last round (the fast lane's candidates). */
  private readonly woken = new Set<string>();
  /** Woken with `allFinal` since their last round: due at once, not after the interval. */
  private readonly allFinal = new Set<string>();
  /**
   * Since when the oldest untold outcome of each workflow the sweep found has waited (the backlog is told oldest
   * first, however often an outage sent its rounds back); only for workflows due or in a round.
   */
  private readonly oldest = new Map<string, number>();
  /** What a claim counted of a workflow it put off (past its round's budget): rounds are filled to fit. */
  private readonly untold = new Map<string, number>();
  /** Outcomes claimed by the rounds of the others whose signals are on their way. */
  private carrying = 0;
  /** A round of quiet workflows is in progress (one at a time, besides the others). */
  private quietRound = false;
  /** A round of the others is claiming: the next is chosen once it is over (what it put off goes first). */
  private claiming = false;
  /** Quiet rounds started so far, and the one the others last waited for (they wait for no two in a row). */
  private quietRounds = 0;
  private waitedFor: number | undefined;
  private pumpScheduled = false;
  private backoffMs = 0;
  private pausedUntil = 0;
  /** The pause is for a server that did not answer (not one that was overloaded, nor the store): a probe may end it. */
  private pausedUnreachable = false;
  private probing = false;
  private lastProbe = 0;
  /** When Temporal was last asked whether it answers (a probe, or a round that failed whole). */
  private lastAsked = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private readonly sweeper: NodeJS.Timeout;
  private sweeping = false;
  /** Where the sweep goes on in the untold outcomes; null: from the oldest. */
  private cursor: UntoldPosition | null = null;
  private lastForget = Date.now();
  private closed = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: RelayOptions) {
    this.store = options.store;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.intervalMs = 1000 / (options.signalsPerSecond ?? 2);
    this.leaseMs = options.leaseMs ?? 15_000;
    this.slowLaneMs = options.slowLaneMs ?? 60_000;
    this.maxDue = options.maxDue ?? 10_000;
    this.log = options.logger ?? silentLogger;
    this.sweeper = setInterval(() => void this.sweep(), options.sweepMs ?? 1000);
    this.sweeper.unref();
    void this.sweep();
  }

  /** In the request that recorded the outcomes: constant work per workflow; the rounds start after it. */
  wake(waiting: Iterable<Pick<WaiterOutcomes, 'workflowId' | 'allFinal'>>): void {
    const now = Date.now();
    for (const { workflowId, allFinal } of waiting) {
      if (!this.makeDue(workflowId, now, allFinal)) continue;
      this.woken.add(workflowId);
      if (allFinal) this.allFinal.add(workflowId);
    }
    // Paused for an outage: a send woken now need not wait out the backoff if Temporal is back already.
    if (this.pausedUnreachable && now - this.lastProbe >= FIRST_BACKOFF_MS) void this.probe();
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  size(): number {
    return this.due.size + this.resting.size + this.lastTold.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    clearTimeout(this.timer);
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /**
   * Due now, or when the rate rule lets this relay tell it again (`allFinal`: now, the store decides); an
   * earlier due time stands. False when it is not held: resting after a refusal, or no room (the sweep finds it).
   */
  private makeDue(workflowId: string, now: number, allFinal = false): boolean {
    if ((this.resting.get(workflowId) ?? 0) > now) return false;
    const current = this.due.get(workflowId);
    if (current === undefined && this.due.size >= this.maxDue) return false;
    const last = this.lastTold.get(workflowId);
    const at = allFinal || last === undefined ? now : Math.max(now, last + this.intervalMs);
    if (current === undefined || at < current) this.due.set(workflowId, at);
    return true;
  }

  /** The next page of the store's untold outcomes, oldest first, while there is room to hold their workflows. */
  private async sweep(): Promise<void> {
    // Paused for the store, no; for Temporal, the sweep goes on: the backlog is held, oldest first, for its return.
    if (this.closed || this.sweeping || (Date.now() < this.pausedUntil && !this.pausedUnreachable)) return;
    this.sweeping = true;
    try {
      const now = Date.now();
      this.forgetPast(now);
      await this.readPage(now);
      if (now - this.lastForget > FORGET_CLAIMS_AFTER_MS) {
        this.lastForget = now;
        await this.store.outbox.forgetClaims(now - FORGET_CLAIMS_AFTER_MS);
      }
      this.pump();
    } catch (error) {
      this.log.warn('relay: the store could not be swept', { error });
    } finally {
      this.sweeping = false;
    }
  }

  private async readPage(now: number): Promise<void> {
    // Half the room at most: the rest is kept for the workflows this relay is woken for (quiet sends).
    const room = Math.floor(this.maxDue / 2) - this.due.size;
    const limit = Math.min(room, (this.options.workflowsPerRound ?? 100) * (this.options.rounds ?? 4));
    if (limit <= 0) return;
    const page = await this.store.outbox.untold({ limit, ...(this.cursor ? { after: this.cursor } : {}), now });
    this.cursor = page.next;
    for (const w of page.workflows) {
      if (this.inFlight.has(w.workflowId) || !this.makeDue(w.workflowId, now)) continue;
      // A later page sees only a workflow's outcomes after its position: the oldest seen stands.
      const seen = this.oldest.get(w.workflowId);
      if (seen === undefined || w.oldestUntoldAt < seen) this.oldest.set(w.workflowId, w.oldestUntoldAt);
    }
  }

  /** What this relay remembers of workflows only for a while: when it last told them, and their rests. */
  private forgetPast(now: number): void {
    for (const [id, at] of this.lastTold) if (now - at > this.intervalMs) this.lastTold.delete(id);
    for (const [id, until] of this.resting) if (until <= now) this.resting.delete(id);
    for (const remembered of [this.oldest, this.untold])
      for (const id of remembered.keys()) if (!this.due.has(id) && !this.inFlight.has(id)) remembered.delete(id);
  }

  /**
   * Starts rounds for the workflows that are due: the quiet ones this relay was woken for in a round of their own;
   * the others one round at a time, once the round before has claimed, as far as the round limit allows.
   */
  private pump(): void {
    if (this.closed) return;
    const now = Date.now();
    if (this.isPaused(now)) return;
    const { ready, next } = this.readyAt(now);
    const perRound = this.options.workflowsPerRound ?? 100;
    // Woken in-process and not told lately (a single send, an OTP): never behind a round of the backlog.
    const isQuiet = (id: string) => this.woken.has(id) && !this.lastTold.has(id);
    const quiet = ready.filter(isQuiet);
    const others = ready.filter((id) => !isQuiet(id));
    if (quiet.length > 0 && !this.quietRound) this.start(quiet.slice(0, perRound), true);
    if (others.length > 0) this.startOthers(others, perRound);
    // Ready ones left wait for a round to claim or finish (it pumps again); later ones for their time.
    if (next < Infinity) this.wakeAt(next);
    if (this.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** The due workflows in no round: those due by `now`, and when the next of the others is. */
  private readyAt(now: number): { ready: string[]; next: number } {
    const ready: string[] = [];
    let next = Infinity;
    for (const [id, at] of this.due) {
      if (this.inFlight.has(id)) continue;
      if (at <= now) ready.push(id);
      else next = Math.min(next, at);
    }
    return { ready, next };
  }

  /** A round of the workflows that are not quiet, when the last one has claimed and there is room for one. */
  private startOthers(others: string[], perRound: number): void {
    const busy = this.running.size - (this.quietRound ? 1 : 0);
    if (this.claiming || busy >= (this.options.rounds ?? 4)) return;
    // It (its claim, its signals' payloads: work that holds the event loop) waits for the quiet round on its way,
    // but not for the next: a send is not held up by the backlog, nor the backlog by a stream of sends.
    if (this.quietRound && (this.waitedFor === undefined || this.waitedFor === this.quietRounds)) {
      this.waitedFor = this.quietRounds;
      return;
    }
    this.waitedFor = undefined;
    // Those not told lately before the ones this relay keeps telling (campaigns); among those, the ones woken
    // in-process before the ones the sweep found; the backlog oldest first.
    const lastTold = (id: string) => this.lastTold.get(id) ?? 0;
    const swept = (id: string) => (this.woken.has(id) ? 0 : 1);
    const age = (id: string) => this.oldest.get(id) ?? Number.MAX_SAFE_INTEGER;
    others.sort((a, b) => lastTold(a) - lastTold(b) || swept(a) - swept(b) || age(a) - age(b));
    const batch = this.fill(others, perRound);
    if (batch.length > 0) this.start(batch);
  }

  /**
   * The first of the ranked workflows whose outcomes, as far as a claim counted them, fit in what is left of the
   * outcomes in flight (the first one whatever its count when none are): so the claim need not put many off, and
   * count them again, round after round. None when the first does not fit.
   */
  private fill(ranked: string[], perRound: number): string[] {
    const room = this.room();
    const batch: string[] = [];
    let outcomes = 0;
    for (const id of ranked) {
      const count = this.untold.get(id) ?? 1;
      if (batch.length === perRound || ((batch.length > 0 || this.carrying > 0) && outcomes + count > room)) break;
      batch.push(id);
      outcomes += count;
    }
    return batch;
  }

  /** Outcomes a round of the others may claim now: what is left of `outcomesInFlight` (at least one). */
  private room(): number {
    const { outcomesInFlight, maxOutcomesPerSignal = MAX_OUTCOMES_PER_SIGNAL } = this.options;
    return Math.max(1, (outcomesInFlight ?? maxOutcomesPerSignal) - this.carrying);
  }

  private start(batch: string[], quiet = false): void {
    for (const id of batch) {
      this.due.delete(id);
      this.woken.delete(id);
      this.allFinal.delete(id);
      this.inFlight.add(id);
    }
    if (quiet) {
      this.quietRound = true;
      this.quietRounds++;
    } else this.claiming = true;
    // The round's own: what its claim put off is given up as soon as it is known.
    const members = new Set(batch);
    const claimed = () => {
      if (quiet) return;
      this.claiming = false;
      // After what waits for the event loop (the store's transactions take turns without it): a send's request,
      // a signal's answer, are not held up by one claim after another.
      setImmediate(() => this.pump());
    };
    const round = this.round(members, quiet, claimed).finally(() => {
      this.running.delete(round);
      if (quiet) this.quietRound = false;
      for (const id of members) this.inFlight.delete(id);
      this.pump();
    });
    this.running.add(round);
  }

  /**
   * Paused: pumps again when the pause is over, or once a probe says whether Temporal is back. While a workflow
   * woken in-process waits (a send), Temporal is asked every WAITING_PROBE_MS, not only when the pause is over.
   */
  private isPaused(now: number): boolean {
    if (this.pausedUnreachable) {
      const probeAt =
        this.woken.size > 0 ? Math.min(this.pausedUntil, this.lastAsked + WAITING_PROBE_MS) : this.pausedUntil;
      if (now >= probeAt) void this.probe();
      else this.wakeAt(probeAt);
      return true;
    }
    if (now < this.pausedUntil) this.wakeAt(this.pausedUntil);
    else return false;
    return true;
  }

  private wakeAt(at: number): void {
    if (this.timer !== undefined && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Infinity;
        this.pump();
      },
      Math.max(0, at - Date.now()),
    );
  }

  private isIdle(): boolean {
    return this.due.size === 0 && this.running.size === 0 && !this.pumpScheduled;
  }

  /**
   * Claims the members (those past its outcome budget are let go at once: `onClaimed` follows), signals each
   * claimed workflow once, and records what became of each.
   */
  private async round(members: Set<string>, quiet: boolean, onClaimed: () => void): Promise<void> {
    const { maxOutcomesPerSignal = MAX_OUTCOMES_PER_SIGNAL } = this.options;
    // The rate rule counts from here, when this relay chose to tell (claim and signal take time of their own).
    const toldAt = Date.now();
    const claimed = await this.claim(members, quiet, toldAt).finally(onClaimed);
    if (!claimed) return;
    // What does not fit in one signal stays untold for the next.
    const signals = claimed.outcomes.map(signalOf);
    const carried = quiet ? 0 : claimed.outcomes.reduce((sum, w) => sum + w.outcomes.length, 0);
    this.carrying += carried;
    const results = await this.signalAll(signals).finally(() => {
      this.carrying -= carried;
      // Room for the next round of the others, while this one marks what it told.
      if (carried > 0) setImmediate(() => this.pump());
    });
    const { told, ended, untried, notTold } = byResult(signals, results);
    // Temporal itself out of reach or overloaded: everything waits, and nothing counts against the workflows.
    const outage =
      notTold.length > 0
        ? await this.outageOf(
            notTold.map((n) => n.result.kind),
            told.length,
          )
        : undefined;
    const refused = outage ? [] : notTold.map(({ signal, result }) => this.refusal(signal, result, toldAt));
    const failed = outage ? [...notTold.map((n) => n.signal.workflowId), ...untried] : untried;
    try {
      // The same time in the store: a later one there would refuse this relay's next claim, due at `toldAt`
      // + the interval, and hold the workflow's next signal back a whole interval more.
      await this.store.outbox.finish(
        this.owner,
        {
          told: told.map((w) => ({
            workflowId: w.workflowId,
            providerMessageIds: w.outcomes.map((o) => o.providerMessageId),
          })),
          ended,
          refused,
          failed,
        },
        toldAt,
      );
    } catch (error) {
      // The signals went; marking them failed: they are told again once the claims' leases run out.
      this.log.warn('relay: told outcomes could not be marked; they will be told again', { error });
    }
    for (const w of told) this.afterTold(w, toldAt, maxOutcomesPerSignal);
    if (told.length > 0) this.backoffMs = 0;
    if (outage) this.pauseAll(failed, outage === 'unreachable');
    else for (const id of untried) this.postpone(id, Date.now());
    if (quiet) for (const id of failed) if (this.due.has(id)) this.woken.add(id);
  }

  /**
   * Claims the members; those past the round's budget are let go (due again at once, in the next round, ahead of
   * what is younger), those held wait. Undefined when the store could not be reached (all wait out a pause).
   */
  private async claim(members: Set<string>, quiet: boolean, toldAt: number): Promise<Claimed | undefined> {
    const { maxOutcomesPerSignal = MAX_OUTCOMES_PER_SIGNAL } = this.options;
    const batch = [...members];
    // A quiet round's workflows not told in it stay quiet (their next round is of their own too).
    const stayQuiet = (ids: readonly string[]) => {
      if (quiet) for (const id of ids) if (this.due.has(id)) this.woken.add(id);
    };
    let claimed: Claimed;
    try {
      claimed = await this.store.outbox.claim(batch, {
        owner: this.owner,
        leaseMs: this.leaseMs,
        minIntervalMs: this.intervalMs,
        maxOutcomes: maxOutcomesPerSignal,
        maxOutcomesInAll: quiet ? maxOutcomesPerSignal : this.room(),
        now: toldAt,
      });
    } catch (error) {
      this.log.warn('relay: the store could not be reached; retrying', { error });
      this.pauseAll(batch);
      stayQuiet(batch);
      return undefined;
    }
    for (const { workflowId: id, untold } of claimed.deferred) {
      members.delete(id);
      this.inFlight.delete(id);
      this.postpone(id, toldAt);
      if (untold !== null) this.untold.set(id, untold);
    }
    // Another relay holds them, or told them within the interval: that relay tells, or this one after it.
    for (const id of claimed.held) this.postpone(id, this.afterHeld(id));
    stayQuiet([...claimed.deferred.map((w) => w.workflowId), ...claimed.held]);
    return claimed;
  }

  private afterTold(w: Signal, toldAt: number, maxOutcomesPerSignal: number): void {
    this.lastTold.set(w.workflowId, toldAt);
    // What it has left untold is newer (the sweep finds it again); an ended one's goes with the next sweep.
    this.oldest.delete(w.workflowId);
    this.untold.delete(w.workflowId);
    if (w.refusals > 0) this.log.info('relay: a refused workflow was told again', { workflowId: w.workflowId });
    // Woken meanwhile, or more untold than one signal carried: due again after the interval (at once when its
    // last awaited outcomes arrived meanwhile: the store decides whether it may be told early).
    const again = this.due.has(w.workflowId) || w.claimed >= maxOutcomesPerSignal || w.outcomes.length < w.claimed;
    if (again) this.postpone(w.workflowId, this.allFinal.has(w.workflowId) ? Date.now() : toldAt + this.intervalMs);
  }

  /**
   * Whether the round's failures say Temporal itself is down: an overloaded answer does; failures of no answer
   * in a round that told nothing do if the server does not answer a probe either.
   */
  private async outageOf(failures: SignalFailure[], told: number): Promise<'overloaded' | 'unreachable' | undefined> {
    if (failures.includes('overloaded')) return 'overloaded';
    if (told > 0 || !failures.includes('unreachable')) return undefined;
    return (await this.isReachable()) ? undefined : 'unreachable';
  }

  private async isReachable(): Promise<boolean> {
    const { client } = this.options;
    this.lastAsked = Date.now();
    try {
      await client.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => client.workflowService.getSystemInfo({}));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * While paused because Temporal did not answer, a probe decides instead of a round: one that answers ends the
   * pause at once (what waited for its end is due now); one that does not extends it. So an outage loads no
   * outcomes from the store, however long it lasts.
   */
  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    this.lastProbe = Date.now();
    try {
      const reachable = await this.isReachable();
      if (this.closed) return;
      if (reachable) this.endPause();
      else if (Date.now() >= this.pausedUntil) this.extendPause();
    } finally {
      this.probing = false;
    }
    this.pump();
  }

  /** A refused signal: its workflow rests for its backoff (in the store, for every relay); the slow lane is said. */
  private refusal(w: Signal, result: { reason: string }, now: number) {
    const refusals = w.refusals + 1;
    const retryAt = now + refusalBackoffMs(refusals, this.slowLaneMs);
    if (this.resting.size < this.maxDue) this.resting.set(w.workflowId, retryAt);
    this.postpone(w.workflowId, retryAt);
    const fields = { workflowId: w.workflowId, refusals, reason: result.reason };
    if (refusals === SLOW_LANE_AFTER)
      this.log.warn(`relay: Temporal keeps refusing a workflow's signals; retried every ${this.slowLaneMs} ms`, fields);
    else this.log.debug('relay: Temporal refused a signal', fields);
    return { workflowId: w.workflowId, retryAt, reason: result.reason };
  }

  /** When to ask again for a workflow the store would not let this relay claim. */
  private afterHeld(workflowId: string): number {
    const now = Date.now();
    const last = this.lastTold.get(workflowId);
    // Told by this relay within the interval (an early signal it was refused): when the interval is over.
    if (last !== undefined && last + this.intervalMs > now + HELD_RETRY_MS) return last + this.intervalMs;
    return now + Math.max(this.intervalMs, HELD_RETRY_MS);
  }

  /** Due no earlier than `at` (a later due time stands); left to the sweep when there is no room. */
  private postpone(workflowId: string, at: number): void {
    const current = this.due.get(workflowId);
    if (current === undefined && this.due.size >= this.maxDue) return;
    this.due.set(workflowId, Math.max(current ?? at, at));
  }

  /**
   * Temporal or the store is out of reach: no round starts before a growing wait is over (or, when Temporal did
   * not answer, before it answers a probe again).
   */
  private pauseAll(workflowIds: readonly string[], temporalUnreachable = false): void {
    this.pausedUnreachable = temporalUnreachable;
    this.extendPause();
    for (const id of workflowIds) this.postpone(id, this.pausedUntil);
  }

  /** What waited for the pause's end is due now. */
  private endPause(): void {
    const now = Date.now();
    for (const [id, at] of this.due) if (at === this.pausedUntil) this.due.set(id, now);
    this.pausedUntil = 0;
    this.pausedUnreachable = false;
  }

  private extendPause(): void {
    const max = this.options.maxBackoffMs ?? 5000;
    this.backoffMs = Math.min(max, this.backoffMs ? this.backoffMs * 2 : FIRST_BACKOFF_MS);
    this.pausedUntil = Date.now() + this.backoffMs;
  }

  /**
   * Signals the round's workflows, a few at a time. Once one finds Temporal unreachable or overloaded the rest
   * are left untried: a round that waited out every call's deadline would outlast its claims' lease.
   */
  private async signalAll(waiting: Signal[]): Promise<Result[]> {
    const results: Result[] = waiting.map(() => ({ kind: 'untried' }));
    let next = 0;
    let stalled = false;
    const lane = async () => {
      while (next < waiting.length && !stalled) {
        const i = next++;
        results[i] = await this.tell(waiting[i]!);
        stalled ||= results[i].kind === 'unreachable' || results[i].kind === 'overloaded';
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.signalsInFlight ?? 16, waiting.length) }, lane));
    return results;
  }

  /** One signal with all of the workflow's untold outcomes, linked to the spans that sent those messages. */
  private tell(w: Signal): Promise<Result> {
    // Well within the lease, so a claim never runs out while its signal is still on its way.
    const { client, callTimeoutMs = Math.min(5000, this.leaseMs / 3) } = this.options;
    const links = (w.traceParents ?? []).flatMap((t) => linkTo(t));
    return inSpan('msgflow.relay.signal', { attributes: signalAttributes(w), links }, async () => {
      try {
        await client.withDeadline(Date.now() + callTimeoutMs, () =>
          client.workflow.getHandle(w.workflowId).signal(messageOutcomesSignal, w.payload),
        );
        this.options.onSignal?.(w.outcomes.length, w.workflowId);
        this.options.afterSignalAccepted?.(w.workflowId);
        return { kind: 'told' };
      } catch (error) {
        const kind = signalFailureOf(error);
        const reason = error instanceof Error ? error.message : String(error);
        if (kind !== 'ended')
          this.log.debug('relay: Temporal did not accept a signal', { error, workflowId: w.workflowId });
        return { kind, reason };
      }
    });
  }
}

/** A workflow's outcomes that go in one signal, that signal's argument, and how many were claimed. */
interface Signal extends ClaimedOutcomes {
  payload: MessageOutcome[];
  claimed: number;
}

/**
 * The first of a workflow's outcomes whose signal's JSON stays under MAX_SIGNAL_BYTES (at least one): provider
 * message ids may be up to 200 characters, which would take a full signal over Temporal's payload limit, and a
 * signal Temporal refuses would be retried for ever.
 */
function signalOf(w: ClaimedOutcomes): Signal {
  const payload: MessageOutcome[] = [];
  let bytes = 2; // the brackets; each outcome adds itself and a comma
  for (const stored of w.outcomes) {
    const outcome = outcomeFromStore(stored);
    bytes += Buffer.byteLength(JSON.stringify(outcome)) + 1;
    if (bytes > MAX_SIGNAL_BYTES && payload.length > 0) break;
    payload.push(outcome);
  }
  return { ...w, outcomes: w.outcomes.slice(0, payload.length), payload, claimed: w.outcomes.length };
}

/** A round's signals by what became of them; `notTold`: those Temporal did not take, with why. */
function byResult(signals: Signal[], results: Result[]) {
  const withKind = (kind: Result['kind']) => signals.filter((_, i) => results[i]!.kind === kind);
  const notTold = signals.flatMap((signal, i) => {
    const result = results[i]!;
    return 'reason' in result && result.kind !== 'ended' ? [{ signal, result }] : [];
  });
  return {
    told: withKind('told'),
    ended: withKind('ended').map((w) => w.workflowId),
    untried: withKind('untried').map((w) => w.workflowId),
    notTold,
  };
}

/** Enough to find the signal from a workflow or a message: the ids, a batch's first few. */
function signalAttributes({ workflowId, outcomes }: WaiterOutcomes): Attributes {
  return {
    'temporal.workflow_id': workflowId,
    'msgflow.outcomes': outcomes.length,
    ...messageIdAttributes(outcomes.map((o) => o.providerMessageId)),
  };
}
