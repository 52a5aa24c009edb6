/**
 * A campaign's status whatever state its workflow is in (the facade's `campaign(key).status()`, the Nexus
 * `campaignStatus` operation): its progress, or how it ended when it did not complete. Types only.
 */
import type { CampaignPhase, CampaignProgress } from './campaign-io.js';
import type { ActivityRetry, FailureReason, FailureStatus } from './failure-reason.js';

/** A campaign's phase, or how its workflow ended when it did not complete. */
export type CampaignStatusPhase = CampaignPhase | FailureStatus;

export interface CampaignStatus extends Omit<CampaignProgress, 'phase'> {
  phase: CampaignStatusPhase;
  /** Why it ended without completing; null while it runs or once it completed. */
  failure: FailureReason | null;
  /** Steps being retried after a failed attempt (e.g. an audience URL answering 503); empty when none. */
  retrying: ActivityRetry[];
}
