/**
 * The text of one request of a personal campaign, rendered where it is sent: the sending activity re-reads
 * the audience page its recipients came from (sources are deterministic per cursor, as de-duplication
 * already requires) and renders their text, so the workflow never carries texts or fields. A few pages are
 * kept per worker: a page of distinct texts is sent in many requests.
 */
import type { AudienceSource } from '../src/api/campaign-io.js';
import type { AudienceFields } from '../src/api/message-template.js';
import { classifyEntries } from '../src/audience/dedup.js';
import { AUDIENCE_FAILURES, audienceFailure } from '../src/audience/failures.js';
import { type AudienceAccess, DEFAULT_AUDIENCE_ACCESS } from '../src/audience/access.js';
import type { AudienceLoaders } from '../src/audience/loaders.js';
import { DownloadCache, pageReaderFor } from '../src/audience/sources.js';
import { personalTemplate, renderTexts } from './audience-texts.js';

/** Where a request's recipients were read: enough to read the same page again. */
export interface ChunkPage {
  campaignId: string;
  campaignStartedAt: string;
  source: Exclude<AudienceSource, { type: 'inline' }>;
  /** The cursor the page was read from, and its size: together they name the page. */
  cursor: string | null;
  limit: number;
  /** Position of the page's first entry in the audience. */
  firstIndex: number;
  defaultCountry?: string;
}

const PAGES_KEPT = 8;

/** A request's one text, and each of its recipients' audience fields (kept for the campaign's retry). */
export interface ChunkText {
  text: string;
  fields: Array<AudienceFields | undefined>;
}

interface RenderedRecipient {
  text: string;
  fields: AudienceFields | undefined;
}

export function createChunkTexts(loaders: AudienceLoaders = {}, access: AudienceAccess = DEFAULT_AUDIENCE_ACCESS) {
  const downloads = new DownloadCache();
  const pages = new Map<string, Promise<Map<string, RenderedRecipient>>>();

  async function renderPage(
    message: string,
    page: ChunkPage,
    signal: AbortSignal,
  ): Promise<Map<string, RenderedRecipient>> {
    const template = personalTemplate(message);
    const campaign = { id: page.campaignId, startedAt: page.campaignStartedAt };
    const context = { campaign, loaders, downloads, access };
    const raw = await pageReaderFor(page.source, context)(page.cursor, page.limit, signal);
    // Within the page, a number's first entry is the one sent (earlier pages' numbers are not in any request).
    const classified = classifyEntries(raw.entries, new Set(), page.firstIndex, page.defaultCountry);
    const fields = raw.fields && classified.positions.map((p) => raw.fields![p]);
    const texts = template
      ? renderTexts(template, { ...classified, fields, firstIndex: page.firstIndex })
      : classified.recipients.map(() => message);
    return new Map(classified.recipients.map((recipient, i) => [recipient, { text: texts[i]!, fields: fields?.[i] }]));
  }

  /** The one text of these recipients of `page`, and their fields; fails if the page no longer gives them one text. */
  return async function textOf(
    message: string,
    page: ChunkPage,
    recipients: readonly string[],
    signal: AbortSignal,
  ): Promise<ChunkText> {
    const key = JSON.stringify([page.campaignId, page.source, page.cursor, page.limit]);
    let rendered = pages.get(key);
    if (!rendered) {
      rendered = renderPage(message, page, signal);
      rendered.catch(() => pages.delete(key));
      pages.set(key, rendered);
      if (pages.size > PAGES_KEPT) pages.delete(pages.keys().next().value!);
    }
    const byRecipient = await rendered;
    const distinct = new Set(recipients.map((r) => byRecipient.get(r)?.text));
    const [text] = distinct;
    if (distinct.size !== 1 || text === undefined) {
      throw audienceFailure(
        AUDIENCE_FAILURES.changed,
        'the audience changed while the campaign ran: a page read again no longer gives its recipients the same text',
      );
    }
    return { text, fields: recipients.map((r) => byRecipient.get(r)?.fields) };
  };
}
