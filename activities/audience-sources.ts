/**
 * Page readers for each kind of audience source: a file (CSV, NDJSON, plain text) read from a byte offset,
 * a URL downloaded once per campaign and worker, and user loaders. Each returns raw entries; validation and
 * de-duplication happen above them (audience-dedup.ts), the same way for every source.
 */
import { open } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/activity';
import type { AudienceFormat, AudienceSource } from '../src/api/campaign-io.js';
import { normalizeRecipient } from '../src/api/campaign-io.js';
import type { AudienceLoaders } from './audience-loaders.js';

export interface RawPage {
  entries: string[];
  nextCursor: string | null;
}

export type PageReader = (cursor: string | null, limit: number, signal: AbortSignal) => Promise<RawPage>;

/** Failure types of audience reading; all non-retryable: a retry cannot fix a missing file or a bad header. */
export const AUDIENCE_FAILURES = {
  unavailable: 'AudienceUnavailable',
  invalidFormat: 'AudienceFormatInvalid',
  changed: 'AudienceChanged',
} as const;

export function audienceFailure(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

export interface SourceContext {
  campaign: { id: string; startedAt: string };
  loaders: AudienceLoaders;
  downloads: DownloadCache;
}

export function pageReaderFor(source: Exclude<AudienceSource, { type: 'inline' }>, context: SourceContext): PageReader {
  switch (source.type) {
    case 'file':
      return filePageReader(source.path, source.format ?? formatFromName(source.path), source.column);
    case 'url':
      return urlPageReader(source.url, source.format, source.column, context);
    case 'loader':
      return loaderPageReader(source.name, source.params ?? {}, context);
  }
}

function formatFromName(name: string): AudienceFormat {
  if (/\.csv$/i.test(name)) return 'csv';
  if (/\.(ndjson|jsonl)$/i.test(name)) return 'ndjson';
  return 'txt';
}

// ---------------------------------------------------------------------------------------------------------
// Entries from lines

/** Picks the phone column of a CSV header, or reports that the first row is data (no header). */
function csvColumn(header: string[], column: string | undefined): { index: number; headerRow: boolean } {
  const names = header.map((h) => h.trim().toLowerCase());
  if (column) {
    const index = names.indexOf(column.trim().toLowerCase());
    if (index < 0)
      throw audienceFailure(
        AUDIENCE_FAILURES.invalidFormat,
        `the CSV has no column "${column}" (columns: ${header.join(', ')})`,
      );
    return { index, headerRow: true };
  }
  if (header.length > 0 && normalizeRecipient(header[0]!).ok) return { index: 0, headerRow: false };
  const index = names.findIndex((n) => /phone|mobile|msisdn|number|recipient|^to$/.test(n));
  if (index >= 0) return { index, headerRow: true };
  if (names.length === 1) return { index: 0, headerRow: true };
  throw audienceFailure(
    AUDIENCE_FAILURES.invalidFormat,
    `no phone column found in the CSV header (${header.join(', ')}): name it with "column"`,
  );
}

export function csvFields(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        current += '"';
        i++;
      } else if (c === '"') quoted = false;
      else current += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(current);
      current = '';
    } else current += c;
  }
  fields.push(current);
  return fields;
}

function ndjsonEntry(line: string, column: string | undefined): string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const key = column ?? Object.keys(record).find((k) => /phone|mobile|msisdn|number|recipient|^to$/i.test(k));
    const field = key === undefined ? undefined : record[key];
    if (typeof field === 'string' || typeof field === 'number') return String(field);
  }
  return line;
}

/** Turns lines into entries for a format; `csvIndex` is the phone column of a CSV. */
function entriesOf(lines: string[], format: AudienceFormat, column: string | undefined, csvIndex: number): string[] {
  switch (format) {
    case 'csv':
      return lines.map((line) => csvFields(line)[csvIndex] ?? '');
    case 'ndjson':
      return lines.map((line) => ndjsonEntry(line, column));
    case 'txt':
      return lines.map((line) => line.trim());
  }
}

// ---------------------------------------------------------------------------------------------------------
// Files: read from a byte offset, so page n costs the same as page 1 at any file size

const BLOCK = 64 * 1024;

interface LineRead {
  lines: string[];
  /** Byte offset just after the last line consumed. */
  end: number;
  eof: boolean;
}

/** Reads up to `max` non-blank lines starting at byte `start`. */
export async function readLines(path: string, start: number, max: number, signal?: AbortSignal): Promise<LineRead> {
  let file;
  try {
    file = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') {
      throw audienceFailure(AUDIENCE_FAILURES.unavailable, `cannot read the audience file (${code})`);
    }
    throw error;
  }
  try {
    const size = (await file.stat()).size;
    const lines: string[] = [];
    let position = start;
    let pending = Buffer.alloc(0);
    let pendingStart = start;
    while (lines.length < max && position < size) {
      signal?.throwIfAborted();
      const buffer = Buffer.alloc(Math.min(BLOCK, size - position));
      const { bytesRead } = await file.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      pending = pending.length
        ? Buffer.concat([pending, buffer.subarray(0, bytesRead)])
        : buffer.subarray(0, bytesRead);
      let from = 0;
      for (let nl = pending.indexOf(10, from); nl >= 0 && lines.length < max; nl = pending.indexOf(10, from)) {
        const line = pending.subarray(from, nl).toString('utf8').replace(/\r$/, '');
        from = nl + 1;
        if (line.trim() !== '') lines.push(line);
      }
      pendingStart += from;
      pending = pending.subarray(from);
    }
    // The last line may end without a newline.
    if (lines.length < max && position >= size && pending.length > 0) {
      const line = pending.toString('utf8').replace(/\r$/, '');
      if (line.trim() !== '') lines.push(line);
      pendingStart += pending.length;
    }
    return { lines, end: pendingStart, eof: pendingStart >= size };
  } finally {
    await file.close();
  }
}

function filePageReader(path: string, format: AudienceFormat, column: string | undefined): PageReader {
  return async (cursor, limit, signal) => {
    let csvIndex = 0;
    let dataStart = 0;
    if (format === 'csv') {
      const first = await readLines(path, 0, 1, signal);
      const header = csvFields(first.lines[0] ?? '');
      const picked = csvColumn(header, column);
      csvIndex = picked.index;
      dataStart = picked.headerRow ? first.end : 0;
    }
    const start = cursor === null ? dataStart : Number(cursor);
    if (!Number.isSafeInteger(start) || start < 0)
      throw audienceFailure(AUDIENCE_FAILURES.changed, 'the audience cursor is not a file offset');
    const read = await readLines(path, start, limit, signal);
    return { entries: entriesOf(read.lines, format, column, csvIndex), nextCursor: read.eof ? null : String(read.end) };
  };
}

// ---------------------------------------------------------------------------------------------------------
// URLs: downloaded once per campaign per worker process, then paged from memory

const MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024;

export class DownloadCache {
  private readonly entries = new Map<string, Promise<string[]>>();
  constructor(private readonly capacity = 8) {}

  /** The entries of `url` for `campaignId`, downloading them on first use in this process. */
  get(
    campaignId: string,
    url: string,
    format: AudienceFormat | undefined,
    column: string | undefined,
    signal: AbortSignal,
  ): Promise<string[]> {
    const key = `${campaignId}\n${url}\n${format ?? ''}\n${column ?? ''}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = download(url, format, column, signal);
      entry.catch(() => this.entries.delete(key));
      this.entries.set(key, entry);
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    return entry;
  }
}

async function download(
  url: string,
  format: AudienceFormat | undefined,
  column: string | undefined,
  signal: AbortSignal,
): Promise<string[]> {
  const response = await fetch(url, { signal });
  if (!response.ok) {
    const message = `the audience URL answered ${response.status}`;
    // A client error will not change on retry; a server error or rate limit may.
    if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429) {
      throw audienceFailure(AUDIENCE_FAILURES.unavailable, message);
    }
    throw new Error(message);
  }
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_DOWNLOAD_BYTES)
    throw audienceFailure(AUDIENCE_FAILURES.unavailable, `the audience is larger than ${MAX_DOWNLOAD_BYTES} bytes`);
  const text = await response.text();
  const resolved =
    format ?? formatFromContentType(response.headers.get('content-type')) ?? formatFromName(new URL(url).pathname);
  let lines = text
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '');
  let csvIndex = 0;
  if (resolved === 'csv' && lines.length > 0) {
    const picked = csvColumn(csvFields(lines[0]!), column);
    csvIndex = picked.index;
    if (picked.headerRow) lines = lines.slice(1);
  }
  return entriesOf(lines, resolved, column, csvIndex);
}

function formatFromContentType(type: string | null): AudienceFormat | undefined {
  if (!type) return undefined;
  if (/text\/csv/i.test(type)) return 'csv';
  if (/ndjson|jsonl|json-seq/i.test(type)) return 'ndjson';
  return undefined;
}

function urlPageReader(
  url: string,
  format: AudienceFormat | undefined,
  column: string | undefined,
  context: SourceContext,
): PageReader {
  return async (cursor, limit, signal) => {
    const entries = await context.downloads.get(context.campaign.id, url, format, column, signal);
    const start = cursor === null ? 0 : Number(cursor);
    const end = Math.min(entries.length, start + limit);
    return { entries: entries.slice(start, end), nextCursor: end < entries.length ? String(end) : null };
  };
}

// ---------------------------------------------------------------------------------------------------------
// User loaders

function loaderPageReader(name: string, params: Record<string, unknown>, context: SourceContext): PageReader {
  const loader = Object.hasOwn(context.loaders, name) ? context.loaders[name] : undefined;
  return async (cursor, limit, signal) => {
    if (!loader) {
      const known = Object.keys(context.loaders);
      throw audienceFailure(
        AUDIENCE_FAILURES.unavailable,
        `no audience loader "${name}" is registered with the worker (${known.length ? `known: ${known.join(', ')}` : 'none registered'})`,
      );
    }
    const page = await loader.readPage({ params, cursor, limit, campaign: context.campaign, signal });
    if (
      !page ||
      !Array.isArray(page.recipients) ||
      !(page.nextCursor === null || typeof page.nextCursor === 'string')
    ) {
      throw audienceFailure(
        AUDIENCE_FAILURES.invalidFormat,
        `audience loader "${name}" must return { recipients: string[], nextCursor: string | null }`,
      );
    }
    if (page.recipients.length > limit) {
      throw audienceFailure(
        AUDIENCE_FAILURES.invalidFormat,
        `audience loader "${name}" returned ${page.recipients.length} entries for a page of ${limit}`,
      );
    }
    if (page.nextCursor !== null && page.nextCursor === cursor) {
      throw audienceFailure(
        AUDIENCE_FAILURES.invalidFormat,
        `audience loader "${name}" returned the same cursor it was given`,
      );
    }
    return { entries: page.recipients.map(String), nextCursor: page.nextCursor };
  };
}
