/**
 * The checker's rules for the workload's promise parts (workload-promises.ts): an opted-out number's erasure,
 * a campaign's retry to the failed, and the teams' shares of the token. Each reports through `violate`, as
 * the rules of checker.ts do; the provider's charges are told apart by their idempotency keys, which name the
 * workflow that sent them.
 */
import type { Client } from '@temporalio/client';
import { DEFAULT_RETRY_STATUSES } from '../../../../src/api/campaign-retry.js';
import type { MessageStore } from '../../../../src/store/index.js';
import type { Rule } from './checker.js';
import { disturbsUntil, type FaultRecord } from './nemesis.js';
import type { WorkloadLog } from './workload.js';

/** A ledger charge and a provider message, as much of them as these rules read. */
export interface Charge {
  id: string;
  reference: string | null;
  recipient: string | null;
  idempotency_key: string | null;
  created_at: string;
}
export interface ProviderMessage {
  id: string;
  mobile_number: string;
  status: string;
}

export type Violate = (rule: Rule, subject: string, detail: string, atMs?: number) => void;

/** Each team within this many points of its weighted share (e.g. 75 % ± 10) of the requests judged. */
export const SHARE_TOLERANCE = 0.1;
/** Fewer requests than this in the fault-free windows while both teams send: not judged (said so). */
export const MIN_JUDGED_REQUESTS = 40;
/** After a fault heals, its effects (restarts, retried requests) still count as the fault's for this long. */
export const HEAL_MARGIN_MS = 5_000;

/**
 * The workflow (and run, for a campaign's chunk) a charge's idempotency key names: `<workflow id>/send` for a
 * single send, `<workflow id>/<first run id>/chunk-<n>` for a campaign's chunk.
 */
export function senderOfKey(key: string | null): { workflowId: string; runId?: string } | undefined {
  if (!key) return undefined;
  const chunk = /^(.+)\/([^/]+)\/chunk-\d+$/.exec(key);
  if (chunk) return { workflowId: chunk[1]!, runId: chunk[2]! };
  const send = /^(.+)\/send$/.exec(key);
  return send ? { workflowId: send[1]! } : undefined;
}

/** Each provider message's sending workflow, from its charge's idempotency key. */
export function sendersOf(charges: readonly Charge[]): Map<string, string> {
  const senders = new Map<string, string>();
  for (const c of charges) {
    const sender = senderOfKey(c.idempotency_key);
    if (c.reference && sender) senders.set(c.reference, sender.workflowId);
  }
  return senders;
}

/**
 * How many messages each of the workload's own numbers may get: one per send or campaign (run) that targets
 * it. Magic numbers, shared by many sends, are not counted.
 */
export function messagesAllowed(workload: WorkloadLog): Map<string, number> {
  const allowed = new Map<string, number>();
  const add = (digits: string) => allowed.set(`+${digits}`, (allowed.get(`+${digits}`) ?? 0) + 1);
  for (const campaign of workload.campaigns) campaign.audience.forEach(add);
  for (const send of workload.sends) if (!send.recipient.startsWith('1202555')) add(send.recipient);
  const erasure = workload.erasure;
  if (erasure) for (let i = 0; i < erasure.before.length + erasure.after.length; i++) add(erasure.number);
  return allowed;
}

interface ErasureSources {
  client: Client;
  store: Pick<MessageStore, 'message' | 'messagesTo'>;
  startedAt: number;
}

/**
 * `erased-not-charged`: no charge to the erased number by a send or campaign run that started after its
 * erasure answered (its opt-out outlives the erasure). `erased-from-store`: the messages of the sends that
 * closed before the erasure no longer name the number in the store.
 */
export async function checkErasure(
  sources: ErasureSources,
  workload: WorkloadLog,
  charges: readonly Charge[],
  violate: Violate,
): Promise<number> {
  const erasure = workload.erasure;
  if (!erasure) return 0;
  const number = `+${erasure.number}`;
  const since = (iso: string) => new Date(iso).getTime() - sources.startedAt;
  if (erasure.answeredMs === undefined) {
    violate('erased-not-charged', number, `the erasure never answered: ${erasure.steps.join(', ')}`);
    return 0;
  }
  const theirs = charges.filter((c) => c.recipient === number);
  for (const charge of theirs) {
    const started = await startedMs(sources, charge.idempotency_key);
    if (started === undefined || started >= erasure.answeredMs)
      violate(
        'erased-not-charged',
        `charge ${charge.id} to ${number}`,
        `by ${charge.idempotency_key ?? 'a request without a key'}, ${started === undefined ? 'a workflow not found' : `started +${(started / 1000).toFixed(1)}s`}, after the erasure answered at +${(erasure.answeredMs / 1000).toFixed(1)}s`,
        since(charge.created_at),
      );
  }
  const closedBefore = new Set(erasure.before.filter((b) => b.closed && b.workflowId).map((b) => b.workflowId!));
  const erasedMessages = theirs
    .filter((c) => c.reference && closedBefore.has(senderOfKey(c.idempotency_key)?.workflowId ?? ''))
    .map((c) => c.reference!);
  const listed = new Set(await sources.store.messagesTo(number));
  for (const id of erasedMessages) {
    const row = await sources.store.message(id);
    if (row?.number || listed.has(id))
      violate(
        'erased-from-store',
        `message ${id}`,
        `the store still names ${number} after its erasure (${erasure.steps.join(', ')})`,
        erasure.answeredMs,
      );
  }
  return theirs.length;
}

/** When the workflow a charge's key names started (ms since the run's start), if it is found. */
async function startedMs(sources: ErasureSources, key: string | null): Promise<number | undefined> {
  const sender = senderOfKey(key);
  if (!sender) return undefined;
  try {
    const description = await sources.client.workflow.getHandle(sender.workflowId, sender.runId).describe();
    return description.startTime.getTime() - sources.startedAt;
  } catch {
    return undefined;
  }
}

/**
 * `retry-to-failed`: a campaign's retry sent once to each recipient whose first message ended failed,
 * undelivered or expired at the provider, and to no one else.
 */
export function checkRetries(
  workload: WorkloadLog,
  sms: readonly ProviderMessage[],
  senders: ReadonlyMap<string, string>,
  violate: Violate,
): number {
  let resent = 0;
  for (const retry of workload.campaigns.filter((c) => c.retryOf)) {
    const first = workload.campaigns.find((c) => c.key === retry.retryOf);
    if (!retry.workflowId || !first?.workflowId) {
      violate('retry-to-failed', retry.key, `never started: ${retry.steps.join(', ')}`);
      continue;
    }
    const firstStatus = new Map(
      sms.filter((m) => senders.get(m.id) === first.workflowId).map((m) => [m.mobile_number, m.status]),
    );
    const failed = [...firstStatus].filter(([, s]) => DEFAULT_RETRY_STATUSES.some((r) => r === s)).map(([n]) => n);
    const resends = new Map<string, number>();
    for (const m of sms.filter((m) => senders.get(m.id) === retry.workflowId))
      resends.set(m.mobile_number, (resends.get(m.mobile_number) ?? 0) + 1);
    for (const [number, times] of resends) {
      resent += times;
      if (!failed.includes(number))
        violate(
          'retry-to-failed',
          `${retry.workflowId} to ${number}`,
          `resent, its first message ${firstStatus.get(number) ?? 'never sent'}`,
        );
      if (times > 1) violate('retry-to-failed', `${retry.workflowId} to ${number}`, `resent ${times} times`);
    }
    for (const number of failed)
      if (!resends.has(number))
        violate(
          'retry-to-failed',
          `${retry.workflowId} to ${number}`,
          `not resent, its first message ${firstStatus.get(number)}`,
        );
  }
  return resent;
}

/** The fairness rule's figures, for the summary. */
export interface TeamShares {
  /** Requests of the teams' campaigns counted (fault-free, both sending). */
  requests: number;
  judged: boolean;
  /** One line, e.g. `clinic=74%(75%),marketing=26%(25%)/58req`, or why it was not judged. */
  summary: string;
}

/**
 * `team-shares`: while both teams' campaigns still had recipients to send (from the later first charge to the
 * earlier last one), in the windows with no fault active (nor healed within HEAL_MARGIN_MS), each team's part
 * of the requests is its weighted share within SHARE_TOLERANCE. A request is a chunk: the charges under one
 * idempotency key, at the first one's time; its team is that of the campaign whose audience holds the number.
 */
export function checkTeamShares(
  workload: WorkloadLog,
  charges: readonly Charge[],
  faults: readonly FaultRecord[],
  startedAt: number,
  violate: Violate,
): TeamShares {
  const teams = Object.keys(workload.teamWeights);
  const teamOf = new Map<string, string>();
  for (const campaign of workload.campaigns)
    if (campaign.team) for (const n of campaign.audience) teamOf.set(`+${n}`, campaign.team);
  const requests = new Map<string, { team: string; atMs: number }>();
  for (const c of charges) {
    const team = teamOf.get(c.recipient ?? '');
    if (!team) continue;
    const atMs = new Date(c.created_at).getTime() - startedAt;
    const key = c.idempotency_key ?? c.id;
    const known = requests.get(key);
    if (!known || atMs < known.atMs) requests.set(key, { team, atMs });
  }
  const times = teams.map((team) => [...requests.values()].filter((r) => r.team === team).map((r) => r.atMs));
  if (teams.length < 2 || times.some((t) => t.length === 0))
    return { requests: 0, judged: false, summary: 'not-judged(a-team-sent-nothing)' };
  const from = Math.max(...times.map((t) => Math.min(...t)));
  const to = Math.min(...times.map((t) => Math.max(...t)));
  const faultFree = (atMs: number) =>
    !faults.some((f) => f.atMs <= atMs && atMs <= (disturbsUntil(f) || Number.POSITIVE_INFINITY) + HEAL_MARGIN_MS);
  const counted = [...requests.values()].filter((r) => r.atMs >= from && r.atMs <= to && faultFree(r.atMs));
  const total = counted.length;
  const weightSum = teams.reduce((sum, team) => sum + workload.teamWeights[team]!, 0);
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  const shares = teams.map((team) => {
    const share = total ? counted.filter((r) => r.team === team).length / total : 0;
    return { team, share, expected: workload.teamWeights[team]! / weightSum };
  });
  const window = `+${(from / 1000).toFixed(1)}s to +${(to / 1000).toFixed(1)}s`;
  if (total < MIN_JUDGED_REQUESTS)
    return { requests: total, judged: false, summary: `not-judged(${total}req<${MIN_JUDGED_REQUESTS})` };
  for (const { team, share, expected } of shares)
    if (Math.abs(share - expected) > SHARE_TOLERANCE)
      violate(
        'team-shares',
        `team ${team}`,
        `${pct(share)} of the ${total} requests sent fault-free while both teams sent (${window}), its share ${pct(expected)} ± ${pct(SHARE_TOLERANCE)}`,
      );
  return {
    requests: total,
    judged: true,
    summary: `${shares.map((s) => `${s.team}=${pct(s.share)}(${pct(s.expected)})`).join(',')}/${total}req`,
  };
}
