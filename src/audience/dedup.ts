/**
 * Validation and de-duplication of audience pages. A recipient listed twice is sent once: the first time it
 * appears. The set of recipients already seen lives in the worker's memory per campaign (numbers as doubles:
 * about 40 MB for a million); a worker that lacks it, or holds it for another position (a crash, another
 * worker took over, an activity retry), rebuilds it by re-reading the pages before the cursor.
 */
import type { InvalidRecipient } from '../api/campaign-io.js';
import { normalizeRecipient } from '../api/campaign-io.js';
import { MAX_REPORTED_ITEMS } from '../api/constants.js';
import type { AudienceFields } from '../api/message-template.js';
import { maskNumber, maskText } from '../redaction.js';
import { AUDIENCE_FAILURES, audienceFailure } from './failures.js';
import type { PageReader } from './sources.js';

export interface ClassifiedEntries {
  /** Valid recipients seen for the first time, in the API's form (international digits). */
  recipients: string[];
  /** Where each recipient was among the entries given (0-based), e.g. to find its fields. */
  positions: number[];
  invalid: InvalidRecipient[];
  duplicates: number;
}

/**
 * Sorts entries into new recipients, duplicates (already in `seen`) and invalid ones; adds the new ones to
 * `seen`. Local numbers are read in `defaultCountry` (the campaign's) when given.
 */
export function classifyEntries(
  entries: string[],
  seen: Set<number>,
  firstIndex: number,
  defaultCountry?: string,
): ClassifiedEntries {
  const result: ClassifiedEntries = { recipients: [], positions: [], invalid: [], duplicates: 0 };
  entries.forEach((entry, i) => {
    const check = normalizeRecipient(entry, defaultCountry);
    if (!check.ok) {
      result.invalid.push({ index: firstIndex + i, value: maskedEntry(entry), reason: check.reason });
      return;
    }
    const key = Number(check.digits); // at most 15 digits: exact as a double
    if (seen.has(key)) result.duplicates += 1;
    else {
      seen.add(key);
      result.recipients.push(check.digits);
      result.positions.push(i);
    }
  });
  return result;
}

/**
 * A refused entry as reported: what looks like a mistyped number keeps its last two digits (as numbers are
 * masked in logs), anything else only its length. An audience source is whatever file or URL it was given,
 * so a report must not echo its lines.
 */
export function maskedEntry(entry: string): string {
  return /^[\d\s+().-]+$/.test(entry) ? maskNumber(entry).slice(-40) : maskText(entry);
}

export interface DedupedPage extends ClassifiedEntries {
  /** Raw entries consumed. */
  entries: number;
  /** Each recipient's fields (aligned with `recipients`), when the source has fields. */
  fields?: Array<AudienceFields | undefined>;
  nextCursor: string | null;
}

/**
 * How an audience is read: its pages' reader and size, the signal that aborts the reading, what to call
 * while earlier pages are re-read (a heartbeat), and the country local numbers are read in.
 */
export interface AudienceReading {
  read: PageReader;
  limit: number;
  signal: AbortSignal;
  onProgress: () => void;
  defaultCountry?: string;
}

/** Where a page starts: its cursor, and the position of its first entry in the whole audience. */
export interface PageStart {
  cursor: string | null;
  firstIndex: number;
}

interface SeenAt {
  cursor: string | null;
  seen: Set<number>;
}

export class AudienceDeduper {
  private readonly campaigns = new Map<string, SeenAt>();
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(private readonly capacity = 16) {}

  /**
   * The page at `cursor`, validated and without recipients seen on earlier pages. `key` names the campaign
   * and its source. `onProgress` is called while earlier pages are re-read (for heartbeats).
   */
  page(key: string, start: PageStart, reading: AudienceReading): Promise<DedupedPage> {
    // One read per campaign at a time, so an activity retry racing its abandoned attempt cannot interleave.
    const previous = this.locks.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.pageUnlocked(key, start, reading));
    this.locks.set(key, next);
    void next
      .finally(() => {
        if (this.locks.get(key) === next) this.locks.delete(key);
      })
      .catch(() => undefined);
    return next;
  }

  private async pageUnlocked(
    key: string,
    { cursor, firstIndex }: PageStart,
    reading: AudienceReading,
  ): Promise<DedupedPage> {
    const { read, limit, signal, defaultCountry } = reading;
    let state = this.campaigns.get(key);
    // The first page starts from nothing seen, whatever an earlier campaign under this key left behind.
    if (cursor === null) state = { cursor, seen: new Set() };
    else if (!state || state.cursor !== cursor) state = await rebuild(reading, cursor);
    const page = await read(cursor, limit, signal);
    const classified = classifyEntries(page.entries, state.seen, firstIndex, defaultCountry);
    state.cursor = page.nextCursor;
    this.remember(key, state);
    return {
      ...classified,
      invalid: classified.invalid.slice(0, MAX_REPORTED_ITEMS),
      entries: page.entries.length,
      fields: page.fields && classified.positions.map((p) => page.fields![p]),
      nextCursor: page.nextCursor,
    };
  }

  private remember(key: string, state: SeenAt): void {
    this.campaigns.delete(key);
    this.campaigns.set(key, state);
    while (this.campaigns.size > this.capacity) this.campaigns.delete(this.campaigns.keys().next().value!);
  }
}

/** Re-reads the pages before `cursor` (with the same page size, so the cursors match) to rebuild the seen set. */
async function rebuild(
  { read, limit, signal, onProgress, defaultCountry }: AudienceReading,
  cursor: string | null,
): Promise<SeenAt> {
  const seen = new Set<number>();
  let position: string | null = null;
  while (position !== cursor) {
    const page = await read(position, limit, signal);
    classifyEntries(page.entries, seen, 0, defaultCountry);
    onProgress();
    if (page.nextCursor === null) {
      throw audienceFailure(
        AUDIENCE_FAILURES.changed,
        'the audience changed while the campaign ran: an earlier page position no longer exists',
      );
    }
    position = page.nextCursor;
  }
  return { cursor, seen };
}

/** A page's new recipients as a scan sees them: with their fields, and the position of the page's first entry. */
export type ScannedPage = Pick<DedupedPage, 'recipients' | 'positions' | 'fields'> & { firstIndex: number };

/**
 * Counts a whole audience (pre-flight): entries, valid unique recipients, invalid ones and duplicates;
 * `visit` sees each page's new recipients (to check and count their texts).
 */
export async function scanAudience(
  { read, limit, signal, onProgress, defaultCountry }: AudienceReading,
  visit?: (page: ScannedPage) => void,
): Promise<{ entries: number; valid: number; invalid: number; duplicates: number }> {
  const seen = new Set<number>();
  const totals = { entries: 0, valid: 0, invalid: 0, duplicates: 0 };
  let cursor: string | null = null;
  do {
    const page = await read(cursor, limit, signal);
    const classified = classifyEntries(page.entries, seen, totals.entries, defaultCountry);
    const fields = page.fields && classified.positions.map((p) => page.fields![p]);
    visit?.({ recipients: classified.recipients, positions: classified.positions, fields, firstIndex: totals.entries });
    totals.entries += page.entries.length;
    totals.valid += classified.recipients.length;
    totals.invalid += classified.invalid.length;
    totals.duplicates += classified.duplicates;
    onProgress();
    cursor = page.nextCursor;
  } while (cursor !== null);
  return totals;
}
