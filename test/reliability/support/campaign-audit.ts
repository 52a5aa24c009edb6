/**
 * What the campaign reliability runs share: an audience of numbers the sandbox delivers (plus the magic
 * final-state ones), and the audit that holds a finished campaign against the provider's own records —
 * the ledger (one charge per recipient) and `GET /messages` (one message per recipient, states counted as
 * the campaign counted them, each final state recorded in the message store) — and the events of every
 * continue-as-new run of its history.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { expect } from 'vitest';
import type { temporal } from '@temporalio/proto';
import type { CampaignResult } from '../../../src/api/campaign-io.js';
import { FINAL_STATUSES } from '../../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../../src/sandbox/index.js';
import { campaignKeyOf } from '../../../src/definitions/workflow-ids.js';
import type { RunningStack } from '../../../src/stack.js';
import type { MessageStore } from '../../../src/store/index.js';
import { countByStatus, providerStatuses, reconcileStore } from './message-outcomes.js';
import type { DeliveryStates } from './sandbox-deliveries.js';

/** `size` distinct recipients (international digits): the five final-state magic numbers, then plain ones (delivered). */
export function campaignAudience(size: number, prefix = '2348'): string[] {
  const magic = FINAL_STATUSES.map((s) => MAGIC_NUMBERS[s]);
  const plain = Array.from(
    { length: Math.max(0, size - magic.length) },
    (_, i) => `${prefix}0${String(30_000_000 + i)}`,
  );
  return [...magic, ...plain].slice(0, size);
}

/** What an audit reads: the provider's admin API and account, its messages, and msgflow's store. */
export type AuditedStack = Pick<RunningStack, 'admin' | 'accountId' | 'messaging' | 'store'>;

export interface CampaignAudit {
  recipients: number;
  charges: number;
  /**
   * Recipients never charged, messages the provider holds that the campaign did not count, and messages the
   * provider finalised whose outcome the message store does not hold.
   */
  lost: number;
  /** Charges beyond one per recipient, charges of numbers outside the audience, and outcomes counted beyond the provider's messages. */
  duplicates: number;
  /** Outcomes the store holds that differ from the provider's final status. */
  wrong: number;
  /** The provider's messages by status. */
  sandboxCounts: Record<string, number>;
  /** The store's rows of the campaign (its per-recipient report) by status. */
  storeCounts: Record<string, number>;
}

/** A finished campaign (`workflowId`, its `result`) against the provider's ledger and messages, and the store. */
export async function auditCampaign(
  stack: AuditedStack,
  audience: string[],
  result: CampaignResult,
  workflowId: string,
): Promise<CampaignAudit> {
  const charges = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms');
  const wanted = new Set(audience.map((n) => `+${n}`));
  const charged = new Map<string, number>();
  for (const charge of charges) charged.set(charge.recipient ?? '', (charged.get(charge.recipient ?? '') ?? 0) + 1);
  const truth = await providerStatuses(stack.messaging);
  const stored = await reconcileStore(stack.store, truth);
  const storeCounts = await campaignReportCounts(stack.store, campaignKeyOf(workflowId));
  const counted = Object.values(result.counts).reduce((sum, n) => sum + (n ?? 0), 0);
  const neverCharged = [...wanted].filter((n) => !charged.has(n)).length;
  const extraCharges = [...charged].reduce((sum, [n, times]) => sum + (wanted.has(n) ? times - 1 : times), 0);
  return {
    recipients: audience.length,
    charges: charges.length,
    lost: neverCharged + Math.max(0, truth.size - counted) + stored.lost,
    duplicates: extraCharges + Math.max(0, counted - truth.size),
    wrong: stored.wrong,
    sandboxCounts: countByStatus(truth.values()),
    storeCounts,
  };
}

/** The campaign's per-recipient report in the store, counted by status (`pending` for a row with none yet). */
export async function campaignReportCounts(store: MessageStore, campaignKey: string): Promise<Record<string, number>> {
  const statuses: string[] = [];
  let after: string | undefined;
  do {
    const page = await store.report({ campaignKey, limit: 1000, after });
    statuses.push(...page.rows.map((r) => r.status ?? 'pending'));
    after = page.next ?? undefined;
  } while (after);
  return countByStatus(statuses);
}

/** Every event of every run of a workflow id (a campaign continues as new on the way). */
export async function eventsOfAllRuns(
  client: Client,
  workflowId: string,
  expectedRuns = 1,
): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  let runIds: string[] = [];
  // Visibility is eventually consistent: the last run may take a moment to be listed.
  for (let attempt = 0; attempt < 100 && runIds.length < expectedRuns; attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, 200));
    runIds = [];
    for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      runIds.push(execution.runId);
  }
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  for (const runId of runIds)
    events.push(...((await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? []));
  return events;
}

export const smsCharges = async (stack: Pick<RunningStack, 'admin' | 'accountId'>): Promise<number> =>
  (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms').length;

/**
 * What a campaign run through faults must show: nothing lost, duplicated or wrong, one charge each, the same
 * counts in the result, the sandbox and the store, and every webhook delivery eventually accepted (none
 * failed for good, none abandoned: `abandoned` counts the sandbox's "giving up" lines).
 */
export function expectCampaignIntact(
  audit: Awaited<ReturnType<typeof auditCampaign>>,
  result: CampaignResult,
  recipients: number,
  { states, abandoned }: { states: DeliveryStates['states']; abandoned: number },
): void {
  expect(audit).toMatchObject({ lost: 0, duplicates: 0, wrong: 0, charges: recipients });
  expect(result).toMatchObject({ sent: recipients, duplicates: 0, notFinal: { count: 0 } });
  expect(result.counts).toEqual({ delivered: recipients - 4, undelivered: 1, failed: 1, rejected: 1, expired: 1 });
  expect(audit.sandboxCounts).toEqual(result.counts);
  expect(audit.storeCounts).toEqual(result.counts);
  expect(states.failed ?? 0).toBe(0);
  expect(abandoned).toBe(0);
  expect(states.delivered).toBeGreaterThanOrEqual(recipients);
}

/**
 * The campaign's result after a Temporal outage: the client's long poll may fail while the server (or its
 * database) is coming back, so it asks again, every 2 s, up to 20 times.
 */
export async function resultAfterOutage(run: { result(): Promise<CampaignResult> }): Promise<CampaignResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run.result();
    } catch (error) {
      if (attempt >= 20) throw error;
      await sleep(2_000);
    }
  }
}
