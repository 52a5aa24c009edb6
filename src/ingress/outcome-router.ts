/**
 * Turns verified status events into outcome signals: every event is recorded in the message store first
 * (deliveries that arrive together share one transaction), then each workflow waiting for one of the body's
 * messages gets one signal carrying all of its outcomes.
 * Signals for a workflow that is receiving many outcomes gather them for a few tens of milliseconds; a quiet
 * workflow's outcome (a single send's final state) goes at once.
 * A body is acknowledged only once the store recorded it and Temporal accepted its signals; when either
 * cannot be reached the caller answers 503 so the provider redelivers (its retries are the buffer).
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { MessageStatusEvent, RejectedEvent } from '../api/events.js';
import type { MessageStore, WaiterOutcomes } from '../store/index.js';
import { outcomeFromStore } from '../store/outcome.js';
import { type MessageOutcome, messageOutcomesSignal } from '../definitions/message-outcomes.js';
import { GroupCommit } from './group-commit.js';
import { sleep } from '../sleep.js';
import { type Attributes, inSpan, linkTo, messageIdAttributes } from '../tracing/spans.js';

export interface OutcomeRouter {
  /**
   * Resolves once every event and every rejected event (authentic but invalid, kept for an operator) is
   * recorded and every waiting workflow was signalled.
   */
  deliver(events: MessageStatusEvent[], deliveryId: string, rejected?: RejectedEvent[]): Promise<void>;
}

/** How long a delivery waits by default for others to share its store transaction. */
const DEFAULT_GROUP_COMMIT_MS = 3;
/** How long a signal gathers outcomes for its workflow by default, while the workflow is receiving many. */
export const DEFAULT_COALESCE_MS = 40;
/** A workflow signalled less recently than this is quiet: its next outcomes go without a gathering window. */
const QUIET_AFTER_MS = 1000;
/** Past this many workflows, those that have gone quiet are forgotten. */
const REMEMBERED_WORKFLOWS = 10_000;

export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

export class TemporalUnavailableError extends Error {
  override name = 'TemporalUnavailableError';
}

export interface OutcomeRouterOptions {
  store: MessageStore;
  client: Client;
  /**
   * How long a delivery waits for others to share its store transaction (default 3 ms). Every delivery waits
   * for its signal's window anyway, so this costs little time and saves most transactions under load.
   */
  groupCommitMs?: number;
  /**
   * How long a signal waits for more outcomes for the same workflow (default 40 ms) when that workflow had a
   * signal within the last second; a quiet workflow's (a single send's final state) goes at once.
   */
  coalesceMs?: number;
  /** Most outcomes in one signal; a fuller batch goes at once (default 2,000). */
  maxOutcomesPerSignal?: number;
  /**
   * Deadline of each signal call, so a down server turns into a prompt 503 instead of a hung request: all
   * attempts together stay well under the usual webhook timeout of providers (about 10 s).
   */
  callTimeoutMs?: number;
  /** Short retries, for a workflow that is busy closing (BUSY_WORKFLOW) or a network blip. */
  attempts?: number;
  /** Called with the number of outcomes each signal carried, for metrics. */
  onSignal?(outcomes: number): void;
}

export function outcomeRouter(options: OutcomeRouterOptions): OutcomeRouter {
  const { store } = options;
  const writer = new GroupCommit(store, options.groupCommitMs ?? DEFAULT_GROUP_COMMIT_MS);
  const signals = new SignalCoalescer(options);
  async function record(
    events: MessageStatusEvent[],
    deliveryId: string,
    rejected: RejectedEvent[],
  ): Promise<WaiterOutcomes[]> {
    try {
      for (const r of rejected) await store.recordRejected(r.reason, r.event);
      return await writer.record(
        events.map((e) => ({
          providerMessageId: e.provider_message_id,
          status: e.status,
          timestamp: e.timestamp,
          eventId: deliveryId,
        })),
      );
    } catch (error) {
      throw new StoreUnavailableError(`the message store did not record the delivery: ${describe(error)}`, {
        cause: error,
      });
    }
  }

  return {
    async deliver(events, deliveryId, rejected = []) {
      const waiting = await inSpan('msgflow.ingress.record', { attributes: { 'msgflow.events': events.length } }, () =>
        record(events, deliveryId, rejected),
      );
      await Promise.all(
        waiting.map((w) =>
          // Linked to the spans that sent these messages: from a status event to its send, and back.
          inSpan(
            'msgflow.ingress.signal',
            { attributes: signalAttributes(w), links: (w.traceParents ?? []).flatMap((t) => linkTo(t)) },
            () => signals.send(w.workflowId, w.outcomes.map(outcomeFromStore)),
          ),
        ),
      );
    },
  };
}

interface PendingSignal {
  outcomes: Map<string, MessageOutcome>;
  callers: Array<{ resolve(): void; reject(error: unknown): void }>;
  timer: NodeJS.Timeout | undefined;
  /** The window has closed (or the batch is full): it goes as soon as no signal to its workflow is in flight. */
  due: boolean;
}

/**
 * One signal per workflow per short window, carrying every outcome the window gathered for it, and at most
 * one signal in flight per workflow: Temporal applies a workflow's signals one at a time anyway, so while
 * one is on its way the next keeps gathering, and a busy server gets fewer, fuller signals (fewer history
 * events and workflow tasks) instead of a queue of small ones on the same workflow.
 */
class SignalCoalescer {
  private readonly pending = new Map<string, PendingSignal>();
  private readonly inFlight = new Set<string>();
  /** When each workflow was last signalled, oldest first. */
  private readonly lastSignalled = new Map<string, number>();
  private readonly coalesceMs: number;
  private readonly maxOutcomes: number;

  constructor(private readonly options: OutcomeRouterOptions) {
    this.coalesceMs = options.coalesceMs ?? DEFAULT_COALESCE_MS;
    this.maxOutcomes = options.maxOutcomesPerSignal ?? 2000;
  }

  send(workflowId: string, outcomes: MessageOutcome[]): Promise<void> {
    return new Promise((resolve, reject) => {
      let batch = this.pending.get(workflowId);
      if (!batch) {
        const timer = setTimeout(() => this.close(workflowId), this.windowFor(workflowId));
        batch = { outcomes: new Map(), callers: [], timer, due: false };
        this.pending.set(workflowId, batch);
      }
      for (const outcome of outcomes) batch.outcomes.set(outcome.providerMessageId, outcome);
      batch.callers.push({ resolve, reject });
      if (batch.outcomes.size >= this.maxOutcomes) this.close(workflowId);
    });
  }

  /** `coalesceMs` for a busy workflow; none for a quiet one, whose outcomes read in the same turn still share one. */
  private windowFor(workflowId: string): number {
    const last = this.lastSignalled.get(workflowId);
    return last !== undefined && Date.now() - last < QUIET_AFTER_MS ? this.coalesceMs : 0;
  }

  private remember(workflowId: string): void {
    const now = Date.now();
    this.lastSignalled.delete(workflowId);
    this.lastSignalled.set(workflowId, now);
    if (this.lastSignalled.size <= REMEMBERED_WORKFLOWS) return;
    for (const [id, at] of this.lastSignalled) {
      if (now - at < QUIET_AFTER_MS) break;
      this.lastSignalled.delete(id);
    }
  }

  /** Ends the gathering window of the workflow's batch, and sends it unless a signal to it is in flight. */
  private close(workflowId: string): void {
    const batch = this.pending.get(workflowId);
    if (!batch) return;
    clearTimeout(batch.timer);
    batch.timer = undefined;
    batch.due = true;
    if (!this.inFlight.has(workflowId)) this.flush(workflowId, batch);
  }

  private flush(workflowId: string, batch: PendingSignal): void {
    this.pending.delete(workflowId);
    this.inFlight.add(workflowId);
    this.remember(workflowId);
    this.signalAll(workflowId, [...batch.outcomes.values()])
      .then(
        () => {
          for (const caller of batch.callers) caller.resolve();
        },
        (error: unknown) => {
          for (const caller of batch.callers) caller.reject(error);
        },
      )
      .finally(() => {
        this.inFlight.delete(workflowId);
        // The next batch goes at once if its window closed while this signal was on its way.
        const next = this.pending.get(workflowId);
        if (next?.due) this.flush(workflowId, next);
      });
  }

  /** A batch that outgrew the limit while waiting for the signal before it goes as several, in turn. */
  private async signalAll(workflowId: string, outcomes: MessageOutcome[]): Promise<void> {
    for (let i = 0; i < outcomes.length; i += this.maxOutcomes) {
      const part = outcomes.slice(i, i + this.maxOutcomes);
      await this.signal(workflowId, part);
      this.options.onSignal?.(part.length);
    }
  }

  private async signal(workflowId: string, outcomes: MessageOutcome[]): Promise<void> {
    const { client, callTimeoutMs = 2000, attempts = 2 } = this.options;
    for (let attempt = 1; ; attempt++) {
      try {
        await client.withDeadline(Date.now() + callTimeoutMs, () =>
          client.workflow.getHandle(workflowId).signal(messageOutcomesSignal, outcomes),
        );
        return;
      } catch (error) {
        // The workflow has closed (completed, cancelled or terminated): nobody is left to tell.
        if (error instanceof WorkflowNotFoundError) return;
        if (attempt >= attempts) {
          throw new TemporalUnavailableError(`Temporal did not accept the signal: ${describe(error)}`, {
            cause: error,
          });
        }
        await sleep(100 * 2 ** attempt);
      }
    }
  }
}

/** Enough to find the signal from a workflow or a message: the ids, a batch's first few. */
function signalAttributes({ workflowId, outcomes }: WaiterOutcomes): Attributes {
  return {
    'temporal.workflow_id': workflowId,
    'msgflow.outcomes': outcomes.length,
    ...messageIdAttributes(outcomes.map((o) => o.providerMessageId)),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
