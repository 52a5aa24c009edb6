/**
 * CSV audiences through csv-parse: the field separator given or detected from the header row (`,` `;` tab `|`),
 * quoted fields (separators, quotes and line breaks inside), CRLF or LF line ends, in UTF-8 (with or without
 * its byte order mark) or UTF-16 with its byte order mark (encoding.ts; any other encoding is refused).
 * Rows come back as records keyed by the header, so every column stays available beside the phone number; a
 * file is read from a byte offset, so page n costs the same as page 1 at any size.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import {
  checkUtf8,
  decodeText,
  ENCODING_SAMPLE_BYTES,
  encodingOf,
  swapBytePairs,
  type TextEncoding,
} from './encoding.js';
import { AUDIENCE_FAILURES, audienceFailure, fileReadFailure as unreadableFile } from './failures.js';

/** One data row: column name → field (a headerless file's columns are named column1, column2, …). */
export type CsvRecord = Record<string, string>;

export interface CsvOptions {
  delimiter?: string;
  /** The phone column's name (any case); otherwise the first named like a phone column. */
  column?: string;
}

export interface CsvLayout {
  delimiter: string;
  columns: string[];
  phoneColumn: string;
  /** Byte offset of the first data row (after the header row, if any). */
  dataStart: number;
  encoding: TextEncoding;
}

const CANDIDATE_DELIMITERS = [',', ';', '\t', '|'];
const PHONE_COLUMN = /phone|mobile|msisdn|number|recipient|^to$/;
/** A first field that is a number rather than a column name: the file has no header row. */
const LOOKS_LIKE_A_NUMBER = /^\+?[\d\s().-]{7,}$/;

/** The candidate that occurs most often outside quotes in `line` (`,` when none does). */
export function detectDelimiter(line: string): string {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && CANDIDATE_DELIMITERS.includes(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let best = ',';
  for (const c of CANDIDATE_DELIMITERS) if ((counts.get(c) ?? 0) > (counts.get(best) ?? 0)) best = c;
  return best;
}

interface ParsedRow {
  fields: string[];
  /** Bytes consumed from the start of the input, up to and including the row's line end. */
  end: number;
}

/** Up to `limit` rows of `input` (blank lines skipped); stops reading once it has them. */
async function parseRows(
  input: Readable,
  { delimiter, encoding }: Pick<CsvLayout, 'delimiter' | 'encoding'>,
  limit: number,
  atFileStart: boolean,
): Promise<ParsedRow[]> {
  // csv-parse reads UTF-16LE itself (offsets stay byte offsets of the file); UTF-16BE is swapped into it.
  const decoding = encoding === 'utf8' ? [checkUtf8()] : encoding === 'utf16be' ? [swapBytePairs()] : [];
  const parser = parse({
    delimiter,
    encoding: encoding === 'utf8' ? 'utf8' : 'utf16le',
    bom: atFileStart,
    info: true,
    record_delimiter: ['\r\n', '\n', '\r'],
    skip_empty_lines: true,
    relax_column_count: true,
    relax_quotes: true,
  });
  // A pipeline, not pipe(): a failing file or encoding check then fails the parser's iteration below.
  pipeline([input, ...decoding, parser], () => {});
  const rows: ParsedRow[] = [];
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { bytes: number } }>) {
      rows.push({ fields: record, end: info.bytes });
      if (rows.length >= limit) break;
    }
  } catch (error) {
    if (error instanceof CsvError)
      throw audienceFailure(AUDIENCE_FAILURES.invalidFormat, `the CSV cannot be read: ${error.message}`);
    throw unreadableFile(error);
  } finally {
    input.destroy();
  }
  return rows;
}

function fileStream(path: string, start: number, signal?: AbortSignal): Readable {
  return createReadStream(path, { start, signal });
}

/** The first 64 KiB of `input` (all of it when shorter). */
async function sample(input: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= ENCODING_SAMPLE_BYTES) break;
    }
    return Buffer.concat(chunks).subarray(0, ENCODING_SAMPLE_BYTES);
  } catch (error) {
    throw unreadableFile(error);
  } finally {
    input.destroy();
  }
}

/** The first line of a sample, for delimiter detection (a character cut at the sample's end decodes as U+FFFD). */
function firstLine(bytes: Buffer, encoding: TextEncoding): string {
  const text = decodeText(bytes, encoding).replace(/^\uFEFF/, '');
  const newline = text.search(/[\r\n]/);
  return newline >= 0 ? text.slice(0, newline) : text;
}

/** Header, separator and phone column of a CSV, from its first row. */
function layoutOf(
  first: ParsedRow | undefined,
  { delimiter, encoding }: Pick<CsvLayout, 'delimiter' | 'encoding'>,
  column: string | undefined,
): CsvLayout {
  const base = { delimiter, encoding };
  if (!first) return { ...base, columns: [], phoneColumn: 'column1', dataStart: 0 }; // an empty file: no one
  const header = (first?.fields ?? []).map((h) => h.trim());
  const names = header.map((h) => h.toLowerCase());
  if (column) {
    const index = names.indexOf(column.trim().toLowerCase());
    if (index < 0)
      throw audienceFailure(
        AUDIENCE_FAILURES.invalidFormat,
        `the CSV has no column "${column}" (columns: ${header.join(', ')})`,
      );
    return { ...base, columns: header, phoneColumn: header[index]!, dataStart: first.end };
  }
  if (header.length > 0 && LOOKS_LIKE_A_NUMBER.test(header[0]!)) {
    const columns = header.map((_, i) => `column${i + 1}`);
    return { ...base, columns, phoneColumn: 'column1', dataStart: 0 };
  }
  const index = names.findIndex((n) => PHONE_COLUMN.test(n));
  if (index >= 0) return { ...base, columns: header, phoneColumn: header[index]!, dataStart: first.end };
  if (names.length === 1) return { ...base, columns: header, phoneColumn: header[0]!, dataStart: first.end };
  throw audienceFailure(
    AUDIENCE_FAILURES.invalidFormat,
    `no phone column found in the CSV header (${header.join(', ')}): name it with "column"`,
  );
}

function recordOf(fields: string[], columns: string[]): CsvRecord {
  const record: CsvRecord = {};
  fields.forEach((field, i) => (record[columns[i] ?? `column${i + 1}`] = field));
  return record;
}

async function layoutFrom(
  open: () => Readable,
  { delimiter, column }: CsvOptions,
  signal?: AbortSignal,
): Promise<CsvLayout> {
  signal?.throwIfAborted();
  const head = await sample(open());
  const encoding = encodingOf(head);
  const separator = delimiter ?? detectDelimiter(firstLine(head, encoding));
  const [first] = await parseRows(open(), { delimiter: separator, encoding }, 1, true);
  return layoutOf(first, { delimiter: separator, encoding }, column);
}

export function csvLayoutOfFile(path: string, options: CsvOptions, signal?: AbortSignal): Promise<CsvLayout> {
  return layoutFrom(() => fileStream(path, 0, signal), options, signal);
}

/** Up to `limit` records from byte `start` (a row boundary: `dataStart` or an `end` returned before). */
export async function readCsvFile(
  path: string,
  layout: CsvLayout,
  start: number,
  limit: number,
  signal?: AbortSignal,
): Promise<{ records: CsvRecord[]; end: number; eof: boolean }> {
  const rows = await parseRows(fileStream(path, start, signal), layout, limit, start === 0);
  const end = start + (rows.at(-1)?.end ?? 0);
  const size = (await stat(path).catch((error: unknown) => Promise.reject(unreadableFile(error)))).size;
  const eof = rows.length < limit || end >= size;
  return { records: rows.map((r) => recordOf(r.fields, layout.columns)), end, eof };
}

/** Every record of a CSV held in memory (a downloaded audience). */
export async function parseCsvText(
  data: Buffer,
  options: CsvOptions,
): Promise<{ layout: CsvLayout; records: CsvRecord[] }> {
  const open = () => Readable.from([data]);
  const layout = await layoutFrom(open, options);
  const rows = await parseRows(
    Readable.from([data.subarray(layout.dataStart)]),
    layout,
    Infinity,
    layout.dataStart === 0,
  );
  return { layout, records: rows.map((r) => recordOf(r.fields, layout.columns)) };
}
