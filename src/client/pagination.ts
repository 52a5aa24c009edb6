/**
 * Cursor pagination as async iteration. The cursor is opaque: it is taken from `next_cursor` and passed
 * back unchanged, never built or parsed; the provider guarantees it is stable under inserts.
 */
import { InvalidInputError } from './errors.js';
import type { ResponseMeta, WithResponse } from './options.js';
import { withResponse } from './response.js';

export interface Page<T> {
  data: T[];
  /** Pass back as `cursor` to get the following page; null on the last page. */
  nextCursor: string | null;
  perPage: number;
}

/** Fetches one page; `cursor` is undefined for the first. */
export type PageFetcher<T> = (cursor: string | undefined) => Promise<WithResponse<Page<T>>>;

export interface ToArrayOptions {
  /** Stop after this many items (no further page is fetched once reached). */
  limit?: number;
}

/** Every item across pages (`for await … of`), or page by page with `.pages()`. Each iteration starts afresh. */
export class PagedList<T> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: PageFetcher<T>,
    private readonly startCursor?: string,
  ) {}

  async *pages(): AsyncGenerator<WithResponse<Page<T>>, void, undefined> {
    let cursor = this.startCursor;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (page.nextCursor === null) return;
      cursor = page.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** The first page alone (e.g. to show one screen of results). */
  async firstPage(): Promise<WithResponse<Page<T>>> {
    return this.fetchPage(this.startCursor);
  }

  async toArray(options: ToArrayOptions = {}): Promise<T[]> {
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    if (!(limit >= 0))
      throw new InvalidInputError('Invalid limit: must be a non-negative number', [
        { path: 'limit', message: 'must be a non-negative number' },
      ]);
    const items: T[] = [];
    if (limit === 0) return items;
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}

/** Converts the wire list (`next_cursor`, `per_page`) into a Page. */
export function toPage<T>(
  wire: { data: T[]; next_cursor: string | null; per_page?: number },
  meta: ResponseMeta,
  requestedPerPage?: number,
): WithResponse<Page<T>> {
  const perPage = typeof wire.per_page === 'number' ? wire.per_page : (requestedPerPage ?? wire.data.length);
  return withResponse({ data: wire.data, nextCursor: wire.next_cursor, perPage }, meta);
}
