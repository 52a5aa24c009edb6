/**
 * Resending a campaign to the recipients it failed: which final states a retry reaches, and the audience
 * source that names them (a loader every worker has built in, reading the message store).
 */
import { z } from 'zod';
import { CampaignKey } from './campaign-io.js';

/** Final states a retry may send to again; never `delivered`. */
export const RETRY_STATUSES = ['failed', 'undelivered', 'expired', 'rejected'] as const;
export const RetryStatus = z.enum(RETRY_STATUSES);
export type RetryStatus = z.infer<typeof RetryStatus>;
/** What a retry sends to unless told otherwise. */
export const DEFAULT_RETRY_STATUSES: readonly RetryStatus[] = ['failed', 'undelivered', 'expired'];

/** The audience loader, built into every worker, that reads a campaign's failed recipients from the store. */
export const RETRY_AUDIENCE_LOADER = 'msgflow.retry';

/** That loader's params: the campaign retried, and the final states sent to again. */
export const RetryAudienceParams = z.strictObject({
  campaign: CampaignKey,
  statuses: z.array(RetryStatus).min(1).max(RETRY_STATUSES.length),
});
export type RetryAudienceParams = z.infer<typeof RetryAudienceParams>;

/** The campaign a retry's input retries, or null when its audience is not a retry's. */
export function retriedCampaignOf(input: {
  audience?: { type: string; name?: string; params?: unknown };
}): string | null {
  const audience = input.audience;
  if (audience?.type !== 'loader' || audience.name !== RETRY_AUDIENCE_LOADER) return null;
  const params = RetryAudienceParams.safeParse(audience.params);
  return params.success ? params.data.campaign : null;
}
