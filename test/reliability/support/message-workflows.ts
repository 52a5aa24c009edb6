/**
 * What Temporal holds about the message workflows of one task queue, read through visibility (the
 * `MsgflowProviderMessageId` / `MsgflowFinalStatus` search attributes), and a clean-up that terminates
 * whatever a suite left running, so a shared Temporal server is not left with thousands of open timers.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { SA } from '../../../src/definitions/search-attributes.js';

export interface MessageWorkflowRun {
  workflowId: string;
  runId: string;
  providerMessageId: string | undefined;
  finalStatus: string | undefined;
}

const messagesOf = (taskQueue: string) => `TaskQueue = '${taskQueue}' AND ${SA.kind.name} = 'message'`;

/** How many message workflows of the queue have recorded a final status (visibility lags a little). */
export async function countWithFinalStatus(client: Client, taskQueue: string): Promise<number> {
  const { count } = await client.workflow.count(`${messagesOf(taskQueue)} AND ${SA.finalStatus.name} IS NOT NULL`);
  return count;
}

/** Every run (not just the latest per id) of the queue's message workflows. */
export async function listMessageWorkflowRuns(client: Client, taskQueue: string): Promise<MessageWorkflowRun[]> {
  const runs: MessageWorkflowRun[] = [];
  for await (const info of client.workflow.list({ query: messagesOf(taskQueue), pageSize: 1000 })) {
    runs.push({
      workflowId: info.workflowId,
      runId: info.runId,
      providerMessageId: info.typedSearchAttributes.get(SA.providerMessageId),
      finalStatus: info.typedSearchAttributes.get(SA.finalStatus),
    });
  }
  return runs;
}

/**
 * Compares Temporal's view with the provider's truth (id → final status):
 * lost = a message with no workflow, or whose workflow has no or another final status;
 * duplicates = extra runs for one message (a status applied twice), or workflows for unknown ids.
 */
export function reconcile(
  truth: Map<string, string>,
  runs: MessageWorkflowRun[],
): { lost: number; duplicates: number; wrongStatus: number; missing: number; extraRuns: number; unknown: number } {
  const byId = new Map<string, MessageWorkflowRun[]>();
  for (const run of runs) {
    const list = byId.get(run.providerMessageId ?? '') ?? [];
    list.push(run);
    byId.set(run.providerMessageId ?? '', list);
  }
  let missing = 0;
  let wrongStatus = 0;
  let extraRuns = 0;
  for (const [id, status] of truth) {
    const found = byId.get(id) ?? [];
    if (found.length === 0) missing++;
    else if (found[0]!.finalStatus !== status) wrongStatus++;
    extraRuns += Math.max(0, found.length - 1);
  }
  const unknown = [...byId.keys()].filter((id) => !truth.has(id)).length;
  return { lost: missing + wrongStatus, duplicates: extraRuns + unknown, wrongStatus, missing, extraRuns, unknown };
}

/** Terminates every running workflow of the queue with one server-side batch operation. */
export async function terminateQueue(client: Client, taskQueue: string, reason: string): Promise<void> {
  await client.workflowService.startBatchOperation({
    namespace: client.options.namespace,
    jobId: `cleanup-${randomUUID()}`,
    visibilityQuery: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
    reason,
    terminationOperation: { identity: 'msgflow reliability suite' },
  });
}
