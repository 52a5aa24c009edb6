/**
 * The activities of the run that backs a `startCampaign` Nexus operation (workflows/nexus-campaign.ts). They
 * run on the Nexus campaigns' worker, whose converter has no codec: what they return and throw is what the
 * caller reads. So they take and give only the campaign's key and counts, never a number or a text; the
 * campaign itself is reached through msgflow's encrypting client (`campaigns`, wired by the worker).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { CampaignResult } from '../src/api/campaign-io.js';
import type { CampaignSummary } from '../src/api/nexus-service.js';

/** The campaign by its key, through msgflow's own client. */
export interface CampaignsByKey {
  /** Resolves with the campaign's result once it ends (across its continue-as-new runs); rejects if it failed. */
  result(key: string): Promise<CampaignResult>;
  /** The campaign's cancel update: no further chunk; resolves once the campaign recorded it or had ended. */
  cancel(key: string): Promise<void>;
  /**
   * Why the campaign has no result and never will (it failed, or is not found), or undefined for an error worth
   * another attempt (e.g. the server unreachable).
   */
  failureOf(error: unknown): { type: string; message: string } | undefined;
}

/** How often the wait tells the server it is alive (its heartbeat timeout is a few times this). */
export const CAMPAIGN_WAIT_HEARTBEAT_MS = 10_000;

export function createNexusCampaignActivities(campaigns: CampaignsByKey) {
  return {
    /** Waits for the campaign to end and gives its summary; a failed campaign fails it, not retried. */
    async awaitCampaignSummary(key: string): Promise<CampaignSummary> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), CAMPAIGN_WAIT_HEARTBEAT_MS);
      try {
        const result = await Promise.race([campaigns.result(key), ctx.cancelled]);
        return summaryOf(key, result);
      } catch (error) {
        const failure = campaigns.failureOf(error);
        if (!failure) throw error;
        throw ApplicationFailure.create({ type: failure.type, message: failure.message, nonRetryable: true });
      } finally {
        clearInterval(beat);
      }
    },

    async cancelCampaign(key: string): Promise<void> {
      await campaigns.cancel(key);
    },
  };
}

export type NexusCampaignActivities = ReturnType<typeof createNexusCampaignActivities>;

/** The result without the invalid recipients' numbers: the caller's summary lives in an unencrypted history. */
export function summaryOf(key: string, result: CampaignResult): CampaignSummary {
  const { invalid, ...rest } = result;
  return { key, ...rest, invalid: { count: invalid.count } };
}
