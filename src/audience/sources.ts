/**
 * Page readers for each kind of audience source: a file (CSV, NDJSON, plain text) read from a byte offset,
 * a URL downloaded once per campaign and worker, and user loaders. Each returns raw entries; validation and
 * de-duplication happen above them (dedup.ts), the same way for every source.
 */
import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import type { AudienceFormat, AudienceSource } from '../api/campaign-io.js';
import type { AudienceFields } from '../api/message-template.js';
import { type AudienceAccess, allowedFile } from './access.js';
import { type CsvOptions, csvLayoutOfFile, parseCsvText, readCsvFile } from './csv.js';
import { downloadAudience } from './download.js';
import { ENCODING_SAMPLE_BYTES, notUtf8, requireUtf8 } from './encoding.js';
import { AUDIENCE_FAILURES, audienceFailure, fileReadFailure } from './failures.js';
import type { AudienceLoaders } from './loaders.js';

export interface RawPage {
  entries: string[];
  /** Each entry's fields (CSV columns, NDJSON keys, a loader row's), aligned with `entries`; none for plain text. */
  fields?: Array<AudienceFields | undefined>;
  nextCursor: string | null;
}

/** Rows of a source: each one's number and, where the source has them, all its fields. */
interface AudienceRows {
  entries: string[];
  fields?: Array<AudienceFields | undefined>;
}

export type PageReader = (cursor: string | null, limit: number, signal: AbortSignal) => Promise<RawPage>;

export { AUDIENCE_FAILURES, audienceFailure } from './failures.js';

export interface SourceContext {
  campaign: { id: string; startedAt: string };
  loaders: AudienceLoaders;
  downloads: DownloadCache;
  /** The folders and hosts audiences may be read from. */
  access: AudienceAccess;
}

export function pageReaderFor(source: Exclude<AudienceSource, { type: 'inline' }>, context: SourceContext): PageReader {
  switch (source.type) {
    case 'file': {
      const format = source.format ?? formatFromName(source.path);
      // Checked on every page: the file is read at its real path, once that is known to be allowed.
      return async (cursor, limit, signal) =>
        filePageReader(await allowedFile(source.path, context.access), format, source)(cursor, limit, signal);
    }
    case 'url':
      return urlPageReader(source.url, source.format, source, context);
    case 'loader':
      return loaderPageReader(source.name, source.params ?? {}, context);
  }
}

function formatFromName(name: string): AudienceFormat {
  if (/\.(csv|tsv)$/i.test(name)) return 'csv';
  if (/\.(ndjson|jsonl)$/i.test(name)) return 'ndjson';
  return 'txt';
}

// ---------------------------------------------------------------------------------------------------------
// Entries from lines

const PHONE_KEY = /phone|mobile|msisdn|number|recipient|^to$/i;

/** An object row (an NDJSON line, a loader's row): its number (the `column` key, else a phone-like one) and fields. */
export function rowOf(
  record: Record<string, unknown>,
  column: string | undefined,
): { entry?: string; fields: AudienceFields } {
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      fields[key] = String(value);
  }
  const key = column ?? Object.keys(fields).find((k) => PHONE_KEY.test(k));
  return { entry: key === undefined ? undefined : fields[key], fields };
}

function ndjsonRow(line: string, column: string | undefined): { entry: string; fields?: AudienceFields } {
  let value: unknown;
  try {
    value = JSON.parse(line.replace(/^\uFEFF/, '')); // a byte order mark may open the file
  } catch {
    return { entry: line };
  }
  if (typeof value === 'string' || typeof value === 'number') return { entry: String(value) };
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const row = rowOf(value as Record<string, unknown>, column);
    return { entry: row.entry ?? line, fields: row.fields };
  }
  return { entry: line };
}

/** Rows of NDJSON or plain-text lines (a CSV is read by records: csv.ts). */
function rowsOf(lines: string[], format: 'ndjson' | 'txt', column: string | undefined): AudienceRows {
  if (format === 'txt') return { entries: lines.map((line) => line.trim()) };
  const rows = lines.map((line) => ndjsonRow(line, column));
  return { entries: rows.map((r) => r.entry), fields: rows.map((r) => r.fields) };
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
  // Opening a folder succeeds; reading it fails (EISDIR): both are told the same way, and neither is retried.
  const file = await open(path, 'r').catch((error: unknown) => {
    throw fileReadFailure(error);
  });
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
      if (position === 0) requireUtf8(buffer.subarray(0, bytesRead));
      position += bytesRead;
      pending = pending.length
        ? Buffer.concat([pending, buffer.subarray(0, bytesRead)])
        : buffer.subarray(0, bytesRead);
      let from = 0;
      for (let nl = pending.indexOf(10, from); nl >= 0 && lines.length < max; nl = pending.indexOf(10, from)) {
        const bytes = pending.subarray(from, nl);
        if (!isUtf8(bytes)) throw notUtf8('is not UTF-8 text');
        const line = bytes.toString('utf8').replace(/\r$/, '');
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
  } catch (error) {
    throw fileReadFailure(error);
  } finally {
    await file.close();
  }
}

function filePageReader(path: string, format: AudienceFormat, options: CsvOptions): PageReader {
  return async (cursor, limit, signal) => {
    const layout = format === 'csv' ? await csvLayoutOfFile(path, options, signal) : undefined;
    const start = cursor === null ? (layout?.dataStart ?? 0) : Number(cursor);
    if (!Number.isSafeInteger(start) || start < 0)
      throw audienceFailure(AUDIENCE_FAILURES.changed, 'the audience cursor is not a file offset');
    if (layout) {
      const read = await readCsvFile(path, layout, start, limit, signal);
      const entries = read.records.map((record) => record[layout.phoneColumn] ?? '');
      return { entries, fields: read.records, nextCursor: read.eof ? null : String(read.end) };
    }
    const read = await readLines(path, start, limit, signal);
    return {
      ...rowsOf(read.lines, format as 'ndjson' | 'txt', options.column),
      nextCursor: read.eof ? null : String(read.end),
    };
  };
}

// ---------------------------------------------------------------------------------------------------------
// URLs: downloaded once per campaign per worker process, then paged from memory

const MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024;

/** One audience download: its URL, how to read it, what it may reach, and the signal that aborts it. */
interface DownloadRequest {
  url: string;
  format: AudienceFormat | undefined;
  options: CsvOptions;
  access: AudienceAccess;
  signal: AbortSignal;
}

export class DownloadCache {
  private readonly entries = new Map<string, Promise<AudienceRows>>();
  constructor(private readonly capacity = 8) {}

  /** The entries of `url` for `campaignId`, downloading them on first use in this process. */
  get(campaignId: string, request: DownloadRequest): Promise<AudienceRows> {
    const { url, format, options } = request;
    const key = `${campaignId}\n${url}\n${format ?? ''}\n${options.column ?? ''}\n${options.delimiter ?? ''}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = download(request);
      entry.catch(() => this.entries.delete(key));
      this.entries.set(key, entry);
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    return entry;
  }
}

async function download({ url, format, options, access, signal }: DownloadRequest): Promise<AudienceRows> {
  const response = await downloadAudience(url, access, MAX_DOWNLOAD_BYTES, signal);
  const data = response.body;
  const resolved = format ?? formatFromContentType(response.contentType) ?? formatFromName(response.url.pathname);
  if (resolved === 'csv') {
    const { layout, records } = await parseCsvText(data, options);
    return { entries: records.map((record) => record[layout.phoneColumn] ?? ''), fields: records };
  }
  requireUtf8(data.subarray(0, ENCODING_SAMPLE_BYTES));
  const lines = data
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '');
  return rowsOf(lines, resolved, options.column);
}

function formatFromContentType(type: string | null): AudienceFormat | undefined {
  if (!type) return undefined;
  if (/text\/(csv|tab-separated-values)/i.test(type)) return 'csv';
  if (/ndjson|jsonl|json-seq/i.test(type)) return 'ndjson';
  return undefined;
}

function urlPageReader(
  url: string,
  format: AudienceFormat | undefined,
  options: CsvOptions,
  context: SourceContext,
): PageReader {
  return async (cursor, limit, signal) => {
    const { downloads, campaign, access } = context;
    const { entries, fields } = await downloads.get(campaign.id, { url, format, options, access, signal });
    const start = cursor === null ? 0 : Number(cursor);
    const end = Math.min(entries.length, start + limit);
    return {
      entries: entries.slice(start, end),
      fields: fields?.slice(start, end),
      nextCursor: end < entries.length ? String(end) : null,
    };
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
        `audience loader "${name}" must return { recipients: Array<string | object>, nextCursor: string | null }`,
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
    // A row may be an object with the number and the fields a message template uses.
    const rows = page.recipients.map((r) =>
      typeof r === 'object' && r !== null ? rowOf(r as Record<string, unknown>, undefined) : { entry: String(r) },
    );
    const entries = rows.map((r) => r.entry ?? '');
    if (!rows.some((r) => 'fields' in r)) return { entries, nextCursor: page.nextCursor };
    return { entries, fields: rows.map((r) => ('fields' in r ? r.fields : undefined)), nextCursor: page.nextCursor };
  };
}
