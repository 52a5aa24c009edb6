/** Newest-first pages keyed on the monotonic `seq`, with signed cursors (see cursor.ts). */
import type { SandboxContext } from '../context.js';

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  per_page: number;
}

export interface PageRequest {
  ctx: SandboxContext;
  accountId: string;
  /** Names the list and its filters; a cursor only works for the same list and filters. */
  list: string;
  cursor: string | undefined;
  perPage: number;
}

/**
 * `fetch(beforeSeq, limit)` returns up to `limit` rows with seq < beforeSeq, newest first. One extra row is
 * fetched to know whether another page exists, so next_cursor is null exactly on the last page.
 */
export function pageOf<R extends { seq: number }, T>(
  request: PageRequest,
  fetch: (beforeSeq: number, limit: number) => R[],
  toItem: (row: R) => T,
): Page<T> {
  const before = request.cursor
    ? request.ctx.cursors.decode(request.cursor, request.accountId, request.list)
    : Number.MAX_SAFE_INTEGER;
  const rows = fetch(before, request.perPage + 1);
  const pageRows = rows.slice(0, request.perPage);
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map(toItem),
    next_cursor:
      rows.length > request.perPage && last
        ? request.ctx.cursors.encode(request.accountId, request.list, last.seq)
        : null,
    per_page: request.perPage,
  };
}
