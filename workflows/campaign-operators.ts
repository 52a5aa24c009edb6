/**
 * What operators see of a campaign in the Temporal UI without running a query: search attributes to find
 * and filter it (kind, key, sender, phase) and the workflow's current details, kept up to date at a
 * bounded rate so a busy campaign does not add an event per outcome.
 */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { CampaignInput, CampaignPhase, CampaignProgress } from '../src/api/campaign-io.js';
import { SA } from '../src/definitions/search-attributes.js';
import { campaignKeyOf } from '../src/definitions/workflow-ids.js';
import { detailsOf } from './campaign-state.js';

/** At most one phase change recorded in history per interval (a campaign can flip sending/throttled often). */
const PHASE_UPDATE_INTERVAL_MS = 10_000;
const FINAL_PHASES: ReadonlySet<CampaignPhase> = new Set(['completed', 'cancelled']);

/** Search attributes for starts that did not set them (e.g. from another language). */
export function tagForOperators(input: CampaignInput): void {
  const { workflowId, typedSearchAttributes } = workflowInfo();
  const wanted = [
    { key: SA.kind, value: 'campaign' },
    { key: SA.campaignKey, value: campaignKeyOf(workflowId) },
    { key: SA.sender, value: input.sender },
  ];
  const missing = wanted.filter(({ key }) => typedSearchAttributes.get(key) === undefined);
  if (missing.length) upsertSearchAttributes(missing);
}

/** Keeps the phase search attribute and the current details in step with the campaign. */
export class OperatorView {
  private shownPhase: CampaignPhase | undefined;
  private shownAt = Number.NEGATIVE_INFINITY;

  constructor() {
    const phase = workflowInfo().typedSearchAttributes.get(SA.campaignPhase);
    this.shownPhase = phase as CampaignPhase | undefined;
  }

  /**
   * Current details cost no history event; the phase is upserted when it changed, at most once per interval.
   * Returns how long until a change held back now may be shown (null when nothing is held back), so the
   * caller wakes up for it.
   */
  show(progress: CampaignProgress): number | null {
    setCurrentDetails(detailsOf(progress));
    if (progress.phase === this.shownPhase) return null;
    const now = Date.now();
    const wait = FINAL_PHASES.has(progress.phase) ? 0 : this.shownAt + PHASE_UPDATE_INTERVAL_MS - now;
    if (wait > 0) return wait;
    upsertSearchAttributes([{ key: SA.campaignPhase, value: progress.phase }]);
    this.shownPhase = progress.phase;
    this.shownAt = now;
    return null;
  }
}
