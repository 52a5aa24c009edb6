/**
 * The fault run's checker: after the faults and a quiet period, holds what the run left — the provider's
 * ledger and messages (the sandbox's admin and v1 APIs), the message store, and the Temporal histories —
 * against msgflow's promises. Liveness first (every outcome told within LIVENESS_MS of the last fault's
 * heal), then safety on whatever is there. Each violation names its rule, its subject, and the faults around.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { CampaignResult } from '../../../../src/api/campaign-io.js';
import { isFinalStatus } from '../../../../src/api/constants.js';
import type { SendSmsResult } from '../../../../src/api/workflow-io.js';
import type { MessagingClient } from '../../../../src/client/index.js';
import type { SandboxAdmin } from '../../../../src/sandbox/index.js';
import type { MessageStore } from '../../../../src/store/index.js';
import { checkErasure, checkRetries, checkTeamShares, messagesAllowed, sendersOf } from './checker-promises.js';
import { type MsgflowWorkflowType, WORKFLOW_VERSIONING } from '../../../../src/definitions/versioning.js';
import { buildsOfTasks } from '../../../support/history.js';
import { disturbsUntil, type FaultRecord, faultsAround } from './nemesis.js';
import type { RefusedWorkflow } from './refused-workflow.js';
import { LOCKED_PLAN_ATTEMPTS, type OtpLogin, type WorkloadLog } from './workload.js';

/**
 * A quiet send's bound, from the provider's final state to its workflow's close: a webhook, a store write and a
 * signal take well under a second; the rest is room for a loaded machine.
 */
export const QUIET_LATENCY_MS = 10_000;

/** The rules, by the name a violation carries. */
export const RULES = {
  'charged-once': 'every message the provider holds is charged exactly once',
  'one-send-per-recipient': 'a recipient of a send or campaign gets one message (no send repeated under a new key)',
  'known-messages': "every provider message of a single send is one its workflow's result names",
  'never-suppressed': 'a number on the suppression list before the sends is never charged',
  'store-as-provider': "every message's final state in the store is the provider's",
  'workflow-as-provider': "every send and campaign closes with the provider's states for its messages",
  'no-nondeterminism': 'no workflow task fails for non-determinism in any history',
  'pinned-on-build': 'a pinned run (single send, OTP session) ends on the build it started on, across deploys',
  'otp-once': 'an OTP session verifies at most once, never with a wrong code, never after it locked',
  liveness: 'every outcome is told within the stated time after the last fault',
  'erased-not-charged': 'an opted-out number, once erased, is charged by no send or campaign started after',
  'erased-from-store': 'an erased number is no longer named by the messages sent to it before',
  'retry-to-failed': "a campaign's retry sends once to each recipient its first run failed, and to no one else",
  'team-shares': 'each team within ± 10 % of its weighted share in fault-free windows while both send',
  'quiet-latency': `a single send outside any fault closes within ${QUIET_LATENCY_MS / 1000} s of its final state`,
  'refused-waits-alone': 'a workflow whose signals Temporal refuses waits in a slow lane of its own, shown as refused',
} as const;
export type Rule = keyof typeof RULES;

export interface Violation {
  rule: Rule;
  subject: string;
  detail: string;
  /** Faults within 10 s of the subject's time, when it has one. */
  faultsAround: string[];
}

export interface CheckSources {
  client: Client;
  admin: SandboxAdmin;
  accountId: string;
  messaging: MessagingClient;
  store: MessageStore;
  /** When the run started (ms since epoch): fault and workload times count from it. */
  startedAt: number;
  /** A workflow whose signals Temporal refuses, registered as a waiter in the store (refused-workflow.ts). */
  refusedWorkflow?: RefusedWorkflow;
}

export interface CheckReport {
  violations: Violation[];
  /** Outcomes checked (messages, workflows, OTP sessions) and what the run left, for the summary. */
  counts: Record<string, number>;
  /** How long after the last heal every outcome was told (null: not within LIVENESS_MS). */
  toldAfterMs: number | null;
  /** Workflow tasks that failed (and were retried), by cause and the first line of their message. */
  taskFailures: Record<string, number>;
  /** The teams' shares as judged, or why they were not (too few requests in fault-free windows). */
  teamShares: string;
}

/** The stated bound: a worker restart (seconds), the provider's webhook retries and a campaign's last chunks. */
export const LIVENESS_MS = 180_000;
/** A send is outside any fault when none was active from this long before its start to this long after its close. */
const QUIET_MARGIN_MS = 5_000;
/**
 * A refused workflow's tries before its slow lane take 4 s (250 ms doubling); the rest is its outcome's way
 * (2 s at the provider, a webhook) and the store's polling. Beyond this its refusals were taken for outages.
 */
const REFUSED_ASIDE_MS = 30_000;

export async function checkRun(
  sources: CheckSources,
  workload: WorkloadLog,
  faults: readonly FaultRecord[],
  lastHealAt: number,
): Promise<CheckReport> {
  const violations: Violation[] = [];
  const since = (iso: string | Date | undefined) => (iso ? new Date(iso).getTime() - sources.startedAt : undefined);
  const violate = (rule: Rule, subject: string, detail: string, atMs?: number) =>
    violations.push({
      rule,
      subject,
      detail,
      faultsAround:
        atMs === undefined
          ? faults.slice(-3).map((r) => `${r.fault.kind} ${r.fault.target}`)
          : faultsAround(faults, atMs),
    });

  const watched = [
    ...workload.sends.filter((s) => s.workflowId).map((s) => s.workflowId!),
    ...workload.campaigns.filter((c) => c.workflowId).map((c) => c.workflowId!),
    // OTP sessions end within a minute (the workload's lifetimes): one left running lost its build's workers.
    ...workload.otps.filter((o) => o.workflowId).map((o) => o.workflowId!),
  ];
  // Liveness: every started send, campaign and OTP session closed, every provider message final and in the store.
  const pending = await untilTold(sources, watched, lastHealAt);
  const toldAfterMs = pending.length === 0 ? Date.now() - lastHealAt : null;
  for (const what of pending) violate('liveness', what, `not told within ${LIVENESS_MS / 1000} s of the last fault`);

  const ledger = await sources.admin.ledger(sources.accountId);
  const charges = ledger.filter((e) => e.kind === 'sms');
  const messages = await providerMessages(sources.messaging);
  const sms = messages.filter((m) => m.kind === 'sms');
  const senders = sendersOf(charges);

  // charged-once
  const chargesOf = new Map<string, number>();
  for (const c of charges) chargesOf.set(c.reference ?? '', (chargesOf.get(c.reference ?? '') ?? 0) + 1);
  for (const m of sms) {
    const times = chargesOf.get(m.id) ?? 0;
    if (times !== 1)
      violate('charged-once', `message ${m.id} to ${m.mobile_number}`, `charged ${times} times`, since(m.created_at));
  }
  const ids = new Set(sms.map((m) => m.id));
  for (const c of charges)
    if (!ids.has(c.reference ?? ''))
      violate(
        'charged-once',
        `charge ${c.id}`,
        `for ${c.reference}, a message the provider does not list`,
        since(c.created_at),
      );

  // never-suppressed
  const suppressed = new Set(workload.suppressedBefore.map((n) => `+${n}`));
  for (const c of charges)
    if (suppressed.has(c.recipient ?? ''))
      violate(
        'never-suppressed',
        `charge ${c.id} to ${c.recipient}`,
        'suppressed before any send',
        since(c.created_at),
      );

  // one-send-per-recipient, for the workload's own numbers (campaigns' and single sends'): one message per
  // send or campaign run that targets the number
  const allowed = messagesAllowed(workload);
  const byRecipient = new Map<string, typeof sms>();
  for (const m of sms) byRecipient.set(m.mobile_number, [...(byRecipient.get(m.mobile_number) ?? []), m]);
  for (const [number, list] of byRecipient)
    if (list.length > (allowed.get(number) ?? Number.POSITIVE_INFINITY))
      violate(
        'one-send-per-recipient',
        number,
        `${list.length} messages: ${list.map((m) => m.id).join(', ')}`,
        since(list[1]!.created_at),
      );

  // store-as-provider
  const finals = sms.filter((m) => isFinalStatus(m.status));
  const stored = new Map<string, string>();
  for (let i = 0; i < finals.length; i += 1000)
    for (const o of await sources.store.outcomes(finals.slice(i, i + 1000).map((m) => m.id)))
      stored.set(o.providerMessageId, o.status);
  for (const m of finals) {
    const status = stored.get(m.id);
    if (status !== m.status)
      violate(
        'store-as-provider',
        `message ${m.id}`,
        `store ${status ?? 'has nothing'}, provider ${m.status}`,
        since(m.created_at),
      );
  }

  // workflow-as-provider: single sends
  const statusOf = new Map(sms.map((m) => [m.id, m.status]));
  const finalAt = new Map(
    sms.filter((m) => isFinalStatus(m.status)).map((m) => [m.id, new Date(m.updated_at).getTime() - sources.startedAt]),
  );
  const quietLatencies: number[] = [];
  const named = new Set<string>();
  let sendsChecked = 0;
  for (const send of workload.sends.filter((s) => s.workflowId)) {
    const result = await closedResult<SendSmsResult>(sources.client, send.workflowId!);
    if (!result.ok) {
      violate('workflow-as-provider', send.workflowId!, result.why, send.startedMs);
      continue;
    }
    sendsChecked++;
    const finalMs = finalAt.get(result.value.messages[0]?.provider_message_id ?? '');
    const latency = quietLatency(send.startedMs, result.closedMs - sources.startedAt, finalMs, faults);
    if (latency !== undefined) quietLatencies.push(latency);
    if (latency !== undefined && latency > QUIET_LATENCY_MS)
      violate('quiet-latency', send.workflowId!, `closed ${latency} ms after its final state`, send.startedMs);
    for (const m of result.value.messages) {
      named.add(m.provider_message_id);
      const truth = statusOf.get(m.provider_message_id);
      if (m.status !== truth || m.status !== send.expected)
        violate(
          'workflow-as-provider',
          `${send.workflowId} message ${m.provider_message_id}`,
          `result ${m.status} (${m.source}), provider ${truth}, asked for ${send.expected}`,
          send.startedMs,
        );
    }
    if (result.value.messages.length !== 1)
      violate(
        'workflow-as-provider',
        send.workflowId!,
        `${result.value.messages.length} messages for one recipient`,
        send.startedMs,
      );
  }
  // known-messages: a single send's message no result names was sent again without its key.
  const singles = new Set(workload.sends.map((s) => `+${s.recipient}`));
  for (const m of sms)
    if (singles.has(m.mobile_number) && !named.has(m.id))
      violate(
        'known-messages',
        `message ${m.id} to ${m.mobile_number}`,
        'no send workflow names it',
        since(m.created_at),
      );

  // workflow-as-provider: campaigns, their counts against the provider's messages to their audience
  let campaignRecipients = 0;
  for (const campaign of workload.campaigns.filter((c) => c.workflowId)) {
    const result = await closedResult<CampaignResult>(sources.client, campaign.workflowId!);
    if (!result.ok) {
      violate('workflow-as-provider', campaign.workflowId!, result.why);
      continue;
    }
    // Its messages by their charges' keys: a retry and a schedule's runs send to numbers other campaigns did.
    const theirs = sms.filter((m) => senders.get(m.id) === campaign.workflowId);
    campaignRecipients += theirs.length;
    const truth: Record<string, number> = {};
    for (const m of theirs) truth[m.status] = (truth[m.status] ?? 0) + 1;
    const counted = Object.fromEntries(Object.entries(result.value.counts).filter(([, n]) => n));
    if (JSON.stringify(sorted(counted)) !== JSON.stringify(sorted(truth)) || result.value.sent !== theirs.length)
      violate(
        'workflow-as-provider',
        campaign.workflowId!,
        `result sent ${result.value.sent} ${JSON.stringify(sorted(counted))}, provider ${theirs.length} ${JSON.stringify(sorted(truth))}`,
      );
    if (campaign.fate === 'complete' && result.value.sent + result.value.suppressed !== campaign.audience.length)
      violate(
        'workflow-as-provider',
        campaign.workflowId!,
        `sent ${result.value.sent} + suppressed ${result.value.suppressed} of ${campaign.audience.length}`,
      );
  }

  // otp-once
  let otpVerified = 0;
  for (const login of workload.otps) {
    const verified = login.verifications.filter((v) => v.status === 'verified');
    otpVerified += verified.length;
    const subject = `OTP ${login.workflowId ?? login.recipient} (${login.plan})`;
    if (verified.length > 1) violate('otp-once', subject, `verified ${verified.length} times`, login.startedMs);
    if (verified.some((v) => !v.right)) violate('otp-once', subject, 'verified with a wrong code', login.startedMs);
    if (verifiedAfterLock(login.verifications))
      violate(
        'otp-once',
        subject,
        `verified after it locked (answers: ${login.verifications.map((v) => `${v.right ? 'right' : 'wrong'}→${v.status}`).join(', ')})`,
        login.startedMs,
      );
  }

  // erased-not-charged, erased-from-store, retry-to-failed, team-shares
  const erasedCharges = await checkErasure(sources, workload, charges, violate);
  const retryResent = checkRetries(workload, sms, senders, violate);
  const shares = checkTeamShares(workload, charges, faults, sources.startedAt, violate);

  // refused-waits-alone: the relay set the refused workflow aside (a backoff of its own, then its slow lane).
  const refused = sources.refusedWorkflow;
  refused?.stopWatching();
  const slowLaneAt = refused?.slowLaneAt();
  const refusedAsideMs = refused && slowLaneAt !== undefined ? slowLaneAt - refused.registeredAt : undefined;
  if (refused && (refusedAsideMs === undefined || refusedAsideMs > REFUSED_ASIDE_MS))
    violate(
      'refused-waits-alone',
      `the refused workflow (message ${refused.providerMessageId})`,
      refusedAsideMs === undefined
        ? 'never in its slow lane'
        : `in its slow lane only ${Math.round(refusedAsideMs / 1000)} s after it was registered`,
      refused.registeredAt - sources.startedAt,
    );

  // no-nondeterminism, in every history of the namespace
  const histories = await nondeterminism(sources.client);
  for (const { workflowId, startedMs, message } of histories.failures)
    violate(
      'no-nondeterminism',
      workflowId,
      message,
      startedMs === undefined ? undefined : startedMs - sources.startedAt,
    );
  for (const { workflowId, startedMs, message } of histories.pinnedMoves)
    violate('pinned-on-build', workflowId, message, startedMs - sources.startedAt);

  return {
    violations,
    toldAfterMs,
    taskFailures: histories.taskFailures,
    teamShares: shares.summary,
    counts: {
      providerMessages: sms.length,
      charges: charges.length,
      storeFinals: finals.length,
      sendsChecked,
      campaignRecipients,
      otpSessions: workload.otps.length,
      otpVerified,
      histories: histories.checked,
      quietSends: quietLatencies.length,
      refusedAsideS: refusedAsideMs === undefined ? -1 : Math.round(refusedAsideMs / 1000),
      quietLatencyMaxMs: Math.max(0, ...quietLatencies),
      workflowTaskFailures: Object.values(histories.taskFailures).reduce((a, b) => a + b, 0),
      scheduledRuns: workload.campaigns.filter((c) => c.scheduleId).length,
      retryResent,
      erasedCharges,
      teamShareRequests: shares.requests,
      builds: histories.builds.size,
    },
  };
}

type MessageRow = Awaited<ReturnType<typeof providerMessages>>[number];

async function providerMessages(messaging: MessagingClient) {
  const all = [];
  for await (const message of messaging.messages.list({ perPage: 200 })) all.push(message);
  return all;
}

/**
 * Polls until the watched workflows are closed, every provider message is final and in the store, and the
 * store's outbox holds no untold outcome.
 */
async function untilTold(sources: CheckSources, workflowIds: string[], lastHealAt: number): Promise<string[]> {
  const deadline = lastHealAt + LIVENESS_MS;
  for (;;) {
    const pending: string[] = [];
    try {
      for (const id of workflowIds) {
        const { status } = await sources.client.workflow.getHandle(id).describe();
        if (status.name === 'RUNNING') pending.push(`workflow ${id} still running`);
        if (pending.length > 20) break;
      }
      const sms: MessageRow[] = (await providerMessages(sources.messaging)).filter((m) => m.kind === 'sms');
      for (const m of sms)
        if (!isFinalStatus(m.status)) pending.push(`message ${m.id} still ${m.status} at the provider`);
      const finals = sms.filter((m) => isFinalStatus(m.status)).map((m) => m.id);
      const told = new Set<string>();
      for (let i = 0; i < finals.length; i += 1000)
        for (const o of await sources.store.outcomes(finals.slice(i, i + 1000))) told.add(o.providerMessageId);
      for (const id of finals) if (!told.has(id)) pending.push(`message ${id}: no outcome in the store`);
      // The outbox emptied: every outcome recorded for a waiting workflow was told (a relay that never sweeps
      // after a crash leaves some, even when the workflows ended by asking the provider).
      // The refused workflow's outcome stays untold (its signals are refused; the relay never drops it).
      const refused = sources.refusedWorkflow;
      const refusedUntold = refused && finals.includes(refused.providerMessageId) ? 1 : 0;
      const { untold } = await sources.store.outbox.backlog();
      if (untold > refusedUntold)
        pending.push(`${untold - refusedUntold} outcome(s) in the store's outbox not told to their workflows`);
    } catch (error) {
      pending.push(`reading the run failed: ${(error as Error).message}`);
    }
    if (pending.length === 0 || Date.now() > deadline) return pending.slice(0, 20);
    await sleep(2_000);
  }
}

async function closedResult<T>(
  client: Client,
  workflowId: string,
): Promise<{ ok: true; value: T; closedMs: number } | { ok: false; why: string }> {
  const handle = client.workflow.getHandle(workflowId);
  const { status, closeTime } = await handle.describe();
  if (status.name === 'RUNNING' || !closeTime) return { ok: false, why: 'still running' };
  try {
    return { ok: true, value: (await handle.result()) as T, closedMs: closeTime.getTime() };
  } catch (error) {
    return { ok: false, why: `closed ${status.name}: ${(error as Error).message}` };
  }
}

/** Every history of the namespace, searched for workflow task failures and the non-determinism among them. */
async function nondeterminism(client: Client) {
  const failures: Array<{ workflowId: string; startedMs: number | undefined; message: string }> = [];
  const pinnedMoves: Array<{ workflowId: string; startedMs: number; message: string }> = [];
  const builds = new Set<string>();
  let checked = 0;
  const taskFailures: Record<string, number> = {};
  const executions: WorkflowExecutionInfo[] = [];
  for await (const execution of client.workflow.list()) executions.push(execution);
  const { WorkflowTaskFailedCause } = proto.temporal.api.enums.v1;
  const NON_DETERMINISTIC = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR;
  for (const execution of executions) {
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    checked++;
    const tasks = buildsOfTasks(history.events ?? []);
    for (const build of tasks) builds.add(build);
    const moved = pinnedMove(execution.type, tasks);
    if (moved)
      pinnedMoves.push({ workflowId: execution.workflowId, startedMs: execution.startTime.getTime(), message: moved });
    for (const event of history.events ?? []) {
      const failed = event.workflowTaskFailedEventAttributes;
      if (!failed) continue;
      const message = failed.failure?.message ?? '';
      const cause = `${WorkflowTaskFailedCause[failed.cause ?? 0] ?? failed.cause}: ${message.split('\n')[0]!.slice(0, 120)}`;
      taskFailures[cause] = (taskFailures[cause] ?? 0) + 1;
      if (failed.cause === NON_DETERMINISTIC || /nondetermin|non-determin|TMPRL1100/i.test(message))
        failures.push({
          workflowId: execution.workflowId,
          startedMs: execution.startTime.getTime(),
          message: message.split('\n')[0]!,
        });
    }
  }
  return { failures, checked, taskFailures, pinnedMoves, builds };
}

/** Why a run of a pinned type did not stay on its first build (its completed tasks' builds), or undefined. */
export function pinnedMove(workflowType: string, taskBuilds: readonly string[]): string | undefined {
  const versioning = WORKFLOW_VERSIONING[workflowType as MsgflowWorkflowType];
  if (versioning?.behavior !== 'PINNED') return undefined;
  const moved = taskBuilds.findIndex((build) => build !== taskBuilds[0]);
  if (moved < 0) return undefined;
  return `${workflowType} started on build ${taskBuilds[0]}, task ${moved + 1} on ${taskBuilds[moved]}`;
}

/**
 * A `verified` after the session answered `locked`, or after as many wrong codes as it allows (the workload's
 * locked sessions allow two) were answered `invalid` or `locked`. A verification that failed (an error) may or
 * may not have been counted, so it is not counted here.
 */
function verifiedAfterLock(verifications: OtpLogin['verifications'], maxAttempts = LOCKED_PLAN_ATTEMPTS): boolean {
  let wrongCounted = 0;
  let locked = false;
  for (const { right, status } of verifications) {
    if (status === 'verified' && (locked || wrongCounted >= maxAttempts)) return true;
    if (status === 'locked') locked = true;
    if (!right && (status === 'invalid' || status === 'locked')) wrongCounted++;
  }
  return false;
}

/** A single send's time from its final state to its close, when no fault came near it; else undefined. */
function quietLatency(
  startedMs: number,
  closedMs: number,
  finalMs: number | undefined,
  faults: readonly FaultRecord[],
): number | undefined {
  if (finalMs === undefined) return undefined;
  const near = faults.some(
    (f) => f.atMs - QUIET_MARGIN_MS <= closedMs && startedMs <= disturbsUntil(f) + QUIET_MARGIN_MS,
  );
  return near ? undefined : closedMs - finalMs;
}

function sorted(counts: Record<string, number>): Array<[string, number]> {
  return Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
}
