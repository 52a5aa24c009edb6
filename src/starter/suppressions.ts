/**
 * The suppression list (opt-outs) for backend services and the CLI, kept in the message store: add, remove,
 * list and import numbers. Every campaign and sendSms reads it just before sending. The provider's API has no
 * inbound messages, so a "Reply STOP" never reaches msgflow by itself: a team feeds its opt-outs in here.
 */
import { parse, resolve } from 'node:path';
import { classifyEntries } from '../audience/dedup.js';
import { DownloadCache, pageReaderFor } from '../audience/sources.js';
import { type AudienceFormat, type InvalidRecipient, normalizeRecipient } from '../api/campaign-io.js';
import { MAX_REPORTED_ITEMS } from '../api/constants.js';
import type { MessageStore, Page, SuppressionRow } from '../store/index.js';

export type SuppressionStore = Pick<MessageStore, 'suppress' | 'unsuppress' | 'suppressedAmong' | 'suppressions'>;

/** Numbers that are not valid phone numbers: nothing was changed. */
export class InvalidNumbersError extends Error {
  override name = 'InvalidNumbersError';
  constructor(readonly invalid: InvalidRecipient[]) {
    // Counted from 1, as a person reads the numbers given (`index` stays 0-based).
    const named = invalid.map((i) => `number ${i.index + 1} ("${i.value}"): ${i.reason}`);
    super(`invalid numbers, nothing changed: ${named.join('; ')}`);
  }
}

export interface NumberOptions {
  /** Country of numbers written in local form (e.g. NG for 0803…); international ones need none. */
  defaultCountry?: string;
}

export interface AddOptions extends NumberOptions {
  /** Where the opt-out came from (e.g. "replied STOP"); at most 200 characters, no personal data. */
  reason?: string;
}

export interface ImportSource {
  path: string;
  /** Default: from the file name (.csv/.tsv, .ndjson/.jsonl, else one number per line). */
  format?: AudienceFormat;
  /** CSV: the phone column; NDJSON: the field. Default: the first named like phone/mobile/msisdn/number. */
  column?: string;
  delimiter?: string;
}

export interface ImportResult {
  /** Entries read from the file. */
  read: number;
  added: number;
  /** Valid numbers that were already on the list. */
  alreadyListed: number;
  /** Numbers listed more than once in the file. */
  duplicates: number;
  invalidCount: number;
  /** The first invalid entries, with their position in the file (0-based) and why. */
  invalid: InvalidRecipient[];
}

const IMPORT_PAGE = 1000;

export class Suppressions {
  constructor(private readonly store: SuppressionStore) {}

  /** Adds numbers to the list; none is added when one is invalid (InvalidNumbersError). */
  async add(numbers: readonly string[], { reason, defaultCountry }: AddOptions = {}) {
    const valid = validNumbers(numbers, defaultCountry);
    const added = await this.store.suppress(valid.map((number) => ({ number, reason })));
    return { added, alreadyListed: new Set(valid).size - added };
  }

  /** Takes numbers off the list; none is removed when one is invalid (InvalidNumbersError). */
  async remove(numbers: readonly string[], { defaultCountry }: NumberOptions = {}) {
    const valid = validNumbers(numbers, defaultCountry);
    const removed = await this.store.unsuppress(valid);
    return { removed, notListed: new Set(valid).size - removed };
  }

  async has(number: string, options: NumberOptions = {}): Promise<boolean> {
    const [valid] = validNumbers([number], options.defaultCountry);
    return (await this.store.suppressedAmong([valid!])).length > 0;
  }

  /** A page of the list, oldest first; erased entries have no number. */
  page({ after, limit = 500 }: { after?: string; limit?: number } = {}): Promise<Page<SuppressionRow>> {
    return this.store.suppressions({ after, limit });
  }

  async *rows(): AsyncGenerator<SuppressionRow> {
    let after: string | undefined;
    do {
      const page = await this.page({ after, limit: 1000 });
      yield* page.rows;
      after = page.next ?? undefined;
    } while (after);
  }

  /**
   * Adds every valid number of a CSV, NDJSON or plain-text file, read the way campaign audiences are; invalid
   * entries are reported, not added.
   */
  async import(source: ImportSource, { reason, defaultCountry }: AddOptions = {}): Promise<ImportResult> {
    const read = pageReaderFor(
      { type: 'file', ...source, path: resolve(source.path) },
      {
        campaign: { id: 'suppression-import', startedAt: new Date().toISOString() },
        loaders: {},
        downloads: new DownloadCache(1),
        // Read here, in the caller's own process and with its rights, not by a worker: any of its files.
        access: { folders: [parse(resolve(source.path)).root], urlHosts: [] },
      },
    );
    const seen = new Set<number>();
    const result: ImportResult = { read: 0, added: 0, alreadyListed: 0, duplicates: 0, invalidCount: 0, invalid: [] };
    let cursor: string | null = null;
    do {
      const page = await read(cursor, IMPORT_PAGE, new AbortController().signal);
      const classified = classifyEntries(page.entries, seen, result.read, defaultCountry);
      const added = await this.store.suppress(
        classified.recipients.map((digits) => ({ number: `+${digits}`, reason })),
      );
      result.read += page.entries.length;
      result.added += added;
      result.alreadyListed += classified.recipients.length - added;
      result.duplicates += classified.duplicates;
      result.invalidCount += classified.invalid.length;
      result.invalid.push(...classified.invalid.slice(0, MAX_REPORTED_ITEMS - result.invalid.length));
      cursor = page.nextCursor;
    } while (cursor !== null);
    return result;
  }
}

/** Numbers in the store's form (+E.164), or InvalidNumbersError naming every invalid one. */
export function validNumbers(numbers: readonly string[], defaultCountry?: string): string[] {
  const invalid: InvalidRecipient[] = [];
  const valid = numbers.flatMap((raw, index) => {
    const check = normalizeRecipient(String(raw), defaultCountry);
    if (check.ok) return [`+${check.digits}`];
    invalid.push({ index, value: String(raw).slice(0, 40), reason: check.reason });
    return [];
  });
  if (invalid.length > 0) throw new InvalidNumbersError(invalid);
  return valid;
}
