/**
 * What the message store knows of a campaign's recipients, for backend services: a page of per-recipient
 * rows, every row, and a feed that yields each message's outcome as it settles, so a service can act on
 * every message without a workflow per message.
 */
import { sleep } from '../sleep.js';
import type { MessageStore, Page, ReportRow, SettledRow, StoredMessage } from '../store/index.js';

export interface ReportPageOptions {
  /** Only rows whose current status (the final one, else the last seen) is this. */
  status?: string;
  /** The `next` cursor of the previous page. */
  after?: string;
  /** Rows per page, 1..1000 (default 500). */
  limit?: number;
}

export interface OutcomeFeedOptions {
  /** How often the store is read for new outcomes (default 1 s). */
  pollIntervalMs?: number;
  /** Stops the feed. */
  signal?: AbortSignal;
  /** Resolves when no further outcome will come (e.g. the campaign's result): the feed then ends once drained. */
  done?: Promise<unknown>;
}

/**
 * Outcomes recorded by a writer whose transaction committed late can carry a time a little before the newest
 * one read; each poll reads this far back again and skips what it already yielded.
 */
const LATE_COMMIT_MS = 60_000;
const FEED_PAGE = 1000;

export class CampaignReports {
  constructor(private readonly store: Pick<MessageStore, 'report' | 'settled' | 'message'>) {}

  page(campaignKey: string, { status, after, limit = 500 }: ReportPageOptions = {}): Promise<Page<ReportRow>> {
    return this.store.report({ campaignKey, status, after, limit });
  }

  async *rows(campaignKey: string, { status }: Pick<ReportPageOptions, 'status'> = {}): AsyncGenerator<ReportRow> {
    let after: string | undefined;
    do {
      const page = await this.page(campaignKey, { status, after, limit: 1000 });
      yield* page.rows;
      after = page.next ?? undefined;
    } while (after);
  }

  message(providerMessageId: string): Promise<StoredMessage | null> {
    return this.store.message(providerMessageId);
  }

  /** Yields each message of the campaign once, as its final state is recorded. */
  async *outcomes(campaignKey: string, options: OutcomeFeedOptions = {}): AsyncGenerator<SettledRow> {
    const { pollIntervalMs = 1000, signal, done } = options;
    let finished = false;
    void done?.then(
      () => (finished = true),
      () => (finished = true),
    );
    const yielded = new Map<string, number>();
    let newest = 0;
    for (;;) {
      const endsAfterThisPoll = finished;
      let after = { recordedAt: Math.max(0, newest - LATE_COMMIT_MS), providerMessageId: '' };
      for (;;) {
        const rows = await this.store.settled({ campaignKey, after, limit: FEED_PAGE });
        for (const row of rows) {
          if (yielded.has(row.providerMessageId)) continue;
          yielded.set(row.providerMessageId, row.recordedAt);
          newest = Math.max(newest, row.recordedAt);
          yield row;
        }
        const last = rows.at(-1);
        if (rows.length < FEED_PAGE || !last) break;
        after = { recordedAt: last.recordedAt, providerMessageId: last.providerMessageId };
      }
      for (const [id, recordedAt] of yielded) if (recordedAt < newest - 2 * LATE_COMMIT_MS) yielded.delete(id);
      if (endsAfterThisPoll || signal?.aborted) return;
      // Aborting ends the wait early; the loop then returns.
      await sleep(pollIntervalMs, signal).catch(() => undefined);
    }
  }
}
