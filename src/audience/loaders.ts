/**
 * The interface for a user-supplied audience: an `AudienceLoader` registered with the worker under a name
 * (`createMsgflowWorker({ audienceLoaders: { dueCustomers } })`, or `MSGFLOW_AUDIENCE_LOADERS=./loaders.js`
 * for `msgflow worker`), used by campaigns whose audience is `{ type: 'loader', name, params }`.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface AudiencePageRequest {
  /** The campaign's `audience.params`, as given. */
  params: Record<string, unknown>;
  /** Null for the first page, then the `nextCursor` of the previous page. */
  cursor: string | null;
  /** Most entries to return. */
  limit: number;
  /**
   * The campaign: an id (`campaign:<key>/<first run id>`, stable across its runs) and when its first run
   * started, e.g. to select "due as of the campaign's start".
   */
  campaign: { id: string; startedAt: string };
  /** Aborted when the activity is cancelled or times out. */
  signal: AbortSignal;
}

export interface AudiencePage {
  /**
   * Phone numbers in international form (`+234 801 234 5678`, `2348012345678`); invalid ones are reported,
   * not sent. A row may be an object instead, `{ phone: '…', name: 'Ada', timezone: 'Africa/Lagos' }`: its
   * number is the field named like phone/mobile/msisdn/number/recipient/to, and a message template's
   * `{placeholders}` are filled from its other fields.
   */
  recipients: Array<string | Record<string, unknown>>;
  /** Where the next page starts; null after the last page. */
  nextCursor: string | null;
}

/**
 * Reads an audience in pages. It must be deterministic within a campaign: the same request returns the
 * same page (keyset pagination such as `WHERE id > :cursor ORDER BY id LIMIT :limit`, with time-dependent
 * filters pinned to `campaign.startedAt`), because a worker that lost its memory re-reads earlier pages to
 * rebuild the set of recipients already seen.
 */
export interface AudienceLoader {
  readPage(request: AudiencePageRequest): Promise<AudiencePage>;
}

export type AudienceLoaders = Readonly<Record<string, AudienceLoader>>;

/** Imports a module whose `audienceLoaders` (or default) export maps names to loaders. */
export async function importAudienceLoaders(modulePath: string): Promise<AudienceLoaders> {
  const module = (await import(pathToFileURL(resolve(modulePath)).href)) as {
    audienceLoaders?: unknown;
    default?: unknown;
  };
  const loaders = module.audienceLoaders ?? module.default;
  if (typeof loaders !== 'object' || loaders === null) {
    throw new Error(
      `${modulePath} must export audienceLoaders (or a default export): an object of name -> { readPage }`,
    );
  }
  for (const [name, loader] of Object.entries(loaders)) {
    if (typeof (loader as Partial<AudienceLoader> | null)?.readPage !== 'function') {
      throw new Error(`audience loader "${name}" in ${modulePath} has no readPage(request) method`);
    }
  }
  return loaders as AudienceLoaders;
}
