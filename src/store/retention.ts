/**
 * Retention: rows of messages with no activity for `retentionMs` are deleted, hourly, never while a workflow
 * still waits for them. A waiter unreleased for twice the retention (and at least 62 days, beyond any wait
 * window) belongs to a workflow that ended without releasing it, e.g. terminated, and keeps nothing.
 */
import type { MessageStore, PurgeResult } from './types.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionOptions {
  retentionMs: number;
  /** How often to purge (default hourly). */
  everyMs?: number;
  onPurged?(result: PurgeResult): void;
  onError?(error: unknown): void;
}

/** Purges now and then every `everyMs`; returns a function that stops it. */
export function startRetention(store: Pick<MessageStore, 'purge'>, options: RetentionOptions): () => void {
  const { retentionMs, everyMs = 60 * 60 * 1000, onPurged, onError } = options;
  const purge = () => {
    const now = Date.now();
    store
      .purge({
        olderThan: new Date(now - retentionMs),
        abandonWaitersRegisteredBefore: new Date(now - Math.max(2 * retentionMs, 62 * DAY_MS)),
      })
      .then(onPurged, onError);
  };
  purge();
  const timer = setInterval(purge, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
