/**
 * Group commit for the ingress: the events of deliveries that arrive within a few milliseconds go to the
 * store together, in one `recordEvents` transaction, instead of one transaction per delivery. Under load most
 * webhook bodies hold a single event, and a transaction's fixed cost (BEGIN, COMMIT and its WAL write, a
 * round trip to PostgreSQL) was most of each one's work. Each caller still gets only the waiters of its own
 * events.
 */
import type { MessageStore, StatusEventRecord, WaiterOutcomes } from '../store/index.js';

interface Submission {
  events: StatusEventRecord[];
  resolve(waiting: WaiterOutcomes[]): void;
  reject(error: unknown): void;
}

export class GroupCommit {
  private queue: Submission[] = [];
  private writing = false;

  /**
   * `gatherMs`: how long the first delivery of a group waits for others (0: only those read in the same turn
   * of the event loop).
   */
  constructor(
    private readonly store: Pick<MessageStore, 'recordEvents'>,
    private readonly gatherMs = 0,
  ) {}

  /** Records the events (with those submitted alongside) and answers the workflows waiting for them. */
  record(events: StatusEventRecord[]): Promise<WaiterOutcomes[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      if (this.writing) return;
      this.writing = true;
      // After the current turn of the event loop at least: requests read meanwhile join this write.
      if (this.gatherMs > 0) setTimeout(() => void this.drain(), this.gatherMs);
      else setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      try {
        const waiting = await this.store.recordEvents(group.flatMap((s) => s.events));
        for (const submission of group) submission.resolve(own(waiting, submission.events));
      } catch (error) {
        // One delivery's bad input must not fail the others: each is tried alone before anyone gets an error.
        if (group.length === 1) group[0]!.reject(error);
        else await Promise.all(group.map((s) => this.store.recordEvents(s.events).then(s.resolve, s.reject)));
      }
    }
    this.writing = false;
  }
}

/** The part of a group's waiters that concerns these events. */
function own(waiting: WaiterOutcomes[], events: StatusEventRecord[]): WaiterOutcomes[] {
  const ids = new Set(events.map((e) => e.providerMessageId));
  return waiting
    .map((w) => ({ ...w, outcomes: w.outcomes.filter((o) => ids.has(o.providerMessageId)) }))
    .filter((w) => w.outcomes.length > 0);
}
