/**
 * Activities that read a campaign's audience, on the workflows' queue (they call no provider). The
 * workflow keeps only a cursor; each page comes back validated and de-duplicated, so the list never sits
 * whole in a history and each run reads the audience as it is when the campaign runs.
 */
import { Context } from '@temporalio/activity';
import type { AudienceSource, InvalidRecipient } from '../src/api/campaign-io.js';
import { MAX_REPORTED_ITEMS } from '../src/api/constants.js';
import { AudienceDeduper, classifyEntries, type DedupedPage, scanAudience } from '../src/audience/dedup.js';
import { type AudienceAccess, DEFAULT_AUDIENCE_ACCESS } from '../src/audience/access.js';
import type { AudienceLoaders } from '../src/audience/loaders.js';
import { DownloadCache, pageReaderFor, type SourceContext } from '../src/audience/sources.js';
import { RECIPIENT_TIME_ZONE } from '../src/api/constants.js';
import type { SendWindow } from '../src/api/campaign-io.js';
import {
  groupByKey,
  type PageRecipients,
  personalTemplate,
  type RecipientGroup,
  renderTexts,
  SegmentTally,
  timeZonesOf,
} from './audience-texts.js';

export type PagedAudienceSource = Exclude<AudienceSource, { type: 'inline' }>;

export interface ReadAudiencePageInput {
  /** The campaign: its workflow id and first run id (stable across continue-as-new, new for a new start). */
  campaignId: string;
  campaignStartedAt: string;
  source: PagedAudienceSource;
  cursor: string | null;
  limit: number;
  /** Position of the page's first entry in the audience, for reporting invalid entries. */
  firstIndex: number;
  /** The campaign's country for numbers in local form (CampaignInput.defaultCountry). */
  defaultCountry?: string;
  /** The campaign's message: with placeholders, the page's recipients come grouped by their text. */
  message?: string;
  /** A window in each recipient's local hours: the page's recipients come grouped by their zone too. */
  sendWindow?: SendWindow;
}

/** A page as the workflow keeps it: numbers and counts, never fields or texts. */
export interface AudiencePage extends Omit<DedupedPage, 'positions' | 'fields'> {
  /**
   * Consecutive runs of `recipients` that share one text (one request each), in order; absent when the
   * message is the same for everyone (one group).
   */
  groups?: RecipientGroup[];
}

export interface ScanAudienceInput {
  campaignId: string;
  campaignStartedAt: string;
  source: PagedAudienceSource;
  limit: number;
  defaultCountry?: string;
  /** The campaign's message: with placeholders, every recipient's text is rendered, checked and counted. */
  message?: string;
  /** A window in each recipient's local hours: every recipient's zone is checked. */
  sendWindow?: SendWindow;
}

export interface AudienceScan {
  entries: number;
  valid: number;
  invalid: number;
  duplicates: number;
  /** For a message with placeholders: the segments of all the rendered texts. */
  texts?: { totalSegments: number; maxSegments: number; ucs2Recipients: number };
}

export interface PreparedAudience {
  recipients: string[];
  invalidCount: number;
  invalid: InvalidRecipient[];
  duplicates: number;
}

export interface AudienceActivityOptions {
  loaders?: AudienceLoaders;
  /** The folders and hosts audiences may be read from (default: DEFAULT_AUDIENCE_ACCESS). */
  access?: AudienceAccess;
}

export function createAudienceActivities({
  loaders = {},
  access = DEFAULT_AUDIENCE_ACCESS,
}: AudienceActivityOptions = {}) {
  const deduper = new AudienceDeduper();
  const downloads = new DownloadCache();
  const context = (campaignId: string, startedAt: string): SourceContext => ({
    campaign: { id: campaignId, startedAt },
    loaders,
    downloads,
    access,
  });
  const heartbeat = () => Context.current().heartbeat();
  const signal = () => Context.current().cancellationSignal;

  return {
    /** An inline list, validated and de-duplicated in one go (it is small: at most MAX_INLINE_RECIPIENTS). */
    async prepareInlineAudience({
      recipients,
      defaultCountry,
    }: {
      recipients: string[];
      defaultCountry?: string;
    }): Promise<PreparedAudience> {
      const classified = classifyEntries(recipients, new Set(), 0, defaultCountry);
      return {
        recipients: classified.recipients,
        invalidCount: classified.invalid.length,
        invalid: classified.invalid.slice(0, MAX_REPORTED_ITEMS),
        duplicates: classified.duplicates,
      };
    },

    /**
     * One page of a file, URL or loader audience: new valid recipients, invalid entries, duplicates skipped;
     * with a personal message, the recipients grouped by their text.
     */
    async readAudiencePage(input: ReadAudiencePageInput): Promise<AudiencePage> {
      const read = pageReaderFor(input.source, context(input.campaignId, input.campaignStartedAt));
      const key = `${input.campaignId}\n${JSON.stringify(input.source)}`;
      const { cursor, limit, firstIndex, defaultCountry } = input;
      const reading = { read, limit, signal: signal(), onProgress: heartbeat, defaultCountry };
      const page = await deduper.page(key, { cursor, firstIndex }, reading);
      const { positions, fields, ...kept } = page;
      const template = input.message === undefined ? null : personalTemplate(input.message);
      const zoned = input.sendWindow?.timeZone === RECIPIENT_TIME_ZONE ? input.sendWindow : null;
      if (!template && !zoned) return kept;
      const recipients: PageRecipients = { recipients: page.recipients, positions, fields, firstIndex };
      const texts = template ? renderTexts(template, recipients) : page.recipients.map(() => '');
      const zones = zoned ? timeZonesOf(zoned, recipients) : undefined;
      return { ...kept, ...groupByKey(page.recipients, texts, zones) };
    },

    /** Pre-flight: reads the whole audience once to count what will be sent (and check every personal text). */
    async scanAudience(input: ScanAudienceInput): Promise<AudienceScan> {
      const read = pageReaderFor(input.source, context(input.campaignId, input.campaignStartedAt));
      const template = input.message === undefined ? null : personalTemplate(input.message);
      const zoned = input.sendWindow?.timeZone === RECIPIENT_TIME_ZONE ? input.sendWindow : null;
      const reading = {
        read,
        limit: input.limit,
        signal: signal(),
        onProgress: heartbeat,
        defaultCountry: input.defaultCountry,
      };
      if (!template && !zoned) return scanAudience(reading);
      const tally = new SegmentTally();
      const totals = await scanAudience(reading, (page) => {
        if (zoned) timeZonesOf(zoned, page);
        if (template) for (const text of renderTexts(template, page)) tally.add(text);
      });
      if (!template) return totals;
      const { totalSegments, maxSegments, ucs2Recipients } = tally;
      return { ...totals, texts: { totalSegments, maxSegments, ucs2Recipients } };
    },
  };
}
