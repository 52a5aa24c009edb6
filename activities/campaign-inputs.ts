/**
 * What a campaign's retry reads: the input a campaign started with, kept in the message store when its first
 * run begins, and the built-in audience loader that pages through a campaign's failed recipients there.
 */
import { RETRY_AUDIENCE_LOADER, RetryAudienceParams } from '../src/api/campaign-retry.js';
import { isJsonObject } from '../src/api/json.js';
import { audienceFailure, AUDIENCE_FAILURES } from '../src/audience/failures.js';
import type { AudienceLoader, AudienceLoaders } from '../src/audience/loaders.js';
import { campaignKeyOf } from '../src/definitions/workflow-ids.js';
import type { MessageStore, RetryRecipient } from '../src/store/index.js';
import { callingWorkflowId } from './message-store.js';

type InputStore = Pick<MessageStore, 'campaignInputs'>;

export function createCampaignInputActivities(store: InputStore) {
  return {
    /** Keeps the calling campaign's input (a later start under its key replaces it). */
    async keepCampaignInput(input: unknown): Promise<void> {
      await store.campaignInputs.keep(campaignKeyOf(callingWorkflowId()), keptInputOf(input));
    },
  };
}

/**
 * What a retry needs of an input: all but an inline audience's numbers. A retry's audience is the store's
 * failed recipients, and numbers kept here would outlive `msgflow data erase`.
 */
export function keptInputOf(input: unknown): unknown {
  if (!isJsonObject(input) || !isJsonObject(input.audience) || input.audience.type !== 'inline') return input;
  return { ...input, audience: { type: 'inline', recipients: [] } };
}

/**
 * A row as a loader gives it: the number first, under `recipient` (the first phone-like field is the number),
 * then the recipient's fields for a template.
 */
export function retryRow({ number, fields }: RetryRecipient): Record<string, string> {
  const row: Record<string, string> = { recipient: number };
  for (const [key, value] of Object.entries(fields ?? {})) if (key !== 'recipient') row[key] = value;
  return row;
}

/** Reads `params.campaign`'s recipients whose final state is one of `params.statuses`, a page at a time. */
export function retryAudienceLoader(store: InputStore): AudienceLoader {
  return {
    async readPage({ params, cursor, limit }) {
      const checked = RetryAudienceParams.safeParse(params);
      if (!checked.success)
        throw audienceFailure(
          AUDIENCE_FAILURES.invalidFormat,
          `the ${RETRY_AUDIENCE_LOADER} audience needs { campaign, statuses }: ${checked.error.issues[0]?.message}`,
        );
      const page = await store.campaignInputs.retryRecipients({
        campaignKey: checked.data.campaign,
        statuses: checked.data.statuses,
        after: cursor ?? undefined,
        limit: Math.min(limit, 1000),
      });
      return { recipients: page.rows.map(retryRow), nextCursor: page.next };
    },
  };
}

/** The user's loaders and the built-in one (its name is msgflow's: a user loader of that name is not used). */
export function withBuiltInLoaders(loaders: AudienceLoaders = {}, store: InputStore): AudienceLoaders {
  return { ...loaders, [RETRY_AUDIENCE_LOADER]: retryAudienceLoader(store) };
}
