/**
 * What msgflow knows about messages, held against the provider's truth. msgflow's side is the message store
 * (the first final outcome it recorded per message) and what its waiting workflows delivered (results,
 * counts); the provider's side is the sandbox's own records (`GET /messages`) and its ledger.
 *
 * - lost: a message the provider finalised whose outcome msgflow never recorded, or never delivered to the
 *   workflow waiting for it;
 * - wrong: an outcome msgflow holds that differs from the provider's final status;
 * - duplicates: an outcome counted twice (a message listed twice in a result, counts summing to more than
 *   the messages sent) or a charge twice in the ledger.
 */
import { isFinalStatus } from '../../../src/api/constants.js';
import type { MessagingClient } from '../../../src/client/index.js';
import type { MessageStore } from '../../../src/store/index.js';

export interface OutcomeVerdict {
  checked: number;
  lost: number;
  wrong: number;
  duplicates: number;
}

export const noFaults = (): OutcomeVerdict => ({ checked: 0, lost: 0, wrong: 0, duplicates: 0 });

export function addVerdicts(...verdicts: OutcomeVerdict[]): OutcomeVerdict {
  return verdicts.reduce(
    (sum, v) => ({
      checked: sum.checked + v.checked,
      lost: sum.lost + v.lost,
      wrong: sum.wrong + v.wrong,
      duplicates: sum.duplicates + v.duplicates,
    }),
    noFaults(),
  );
}

/** The provider's messages of the client's account: id → status. */
export async function providerStatuses(messaging: MessagingClient): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  for await (const message of messaging.messages.list({ perPage: 200 })) statuses.set(message.id, message.status);
  return statuses;
}

export const allFinal = (statuses: Map<string, string>) => [...statuses.values()].every(isFinalStatus);

/** The provider's messages by status. */
export function countByStatus(statuses: Iterable<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** How many of `ids` the store holds a final outcome for (a cheap progress probe). */
export async function storedFinals(store: MessageStore, ids: readonly string[]): Promise<number> {
  let found = 0;
  for (let i = 0; i < ids.length; i += 1000) found += (await store.outcomes(ids.slice(i, i + 1000))).length;
  return found;
}

/** The store's record of every finalised message in `truth`: present, and the provider's status. */
export async function reconcileStore(store: MessageStore, truth: Map<string, string>): Promise<OutcomeVerdict> {
  const ids = [...truth].filter(([, status]) => isFinalStatus(status)).map(([id]) => id);
  const verdict = noFaults();
  for (let i = 0; i < ids.length; i += 1000) {
    const batch = ids.slice(i, i + 1000);
    const recorded = new Map((await store.outcomes(batch)).map((o) => [o.providerMessageId, o.status]));
    for (const id of batch) {
      verdict.checked++;
      const status = recorded.get(id);
      if (status === undefined) verdict.lost++;
      else if (status !== truth.get(id)) verdict.wrong++;
    }
  }
  return verdict;
}

/** What a workflow reported per message (a sendSms result, an awaitMessage outcome). */
export interface DeliveredOutcome {
  providerMessageId: string;
  status: string;
  source: string;
}

/**
 * Outcomes delivered to workflows, against the provider: each finalised message reported once, with its
 * status, learnt from the webhook (`source` other than `webhook` means the event never reached the workflow).
 */
export function reconcileDelivered(
  truth: Map<string, string>,
  expected: readonly string[],
  delivered: readonly DeliveredOutcome[],
): OutcomeVerdict {
  const verdict = noFaults();
  const byId = new Map<string, DeliveredOutcome>();
  for (const outcome of delivered) {
    if (byId.has(outcome.providerMessageId)) verdict.duplicates++;
    else byId.set(outcome.providerMessageId, outcome);
  }
  for (const id of expected) {
    verdict.checked++;
    const outcome = byId.get(id);
    if (!outcome || outcome.source !== 'webhook' || !isFinalStatus(outcome.status)) verdict.lost++;
    else if (outcome.status !== truth.get(id)) verdict.wrong++;
  }
  return verdict;
}

/**
 * The ledger against the messages msgflow sent: one `sms` charge per message (a charge twice is a duplicate
 * send; a message of ours never charged means the provider never took it) and no provider message we do not
 * know of (a send repeated under a new key).
 */
export function reconcileCharges(
  charges: ReadonlyArray<{ kind: string; reference?: string | null }>,
  sentIds: readonly string[],
  providerIds: Iterable<string>,
): OutcomeVerdict {
  const verdict = noFaults();
  const charged = new Map<string, number>();
  for (const charge of charges.filter((c) => c.kind === 'sms'))
    charged.set(charge.reference ?? '', (charged.get(charge.reference ?? '') ?? 0) + 1);
  const sent = new Set(sentIds);
  for (const id of sent) {
    verdict.checked++;
    const times = charged.get(id) ?? 0;
    if (times === 0) verdict.lost++;
    verdict.duplicates += Math.max(0, times - 1);
  }
  for (const id of providerIds) if (!sent.has(id)) verdict.duplicates++;
  return verdict;
}
