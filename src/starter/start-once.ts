/**
 * A key means "once" for as long as Temporal keeps the run (the namespace's retention): a start with a key
 * whose run is open or completed gets that run, and a start with the same key but another input is refused
 * before anything is sent. Only a run that did not complete (failed, cancelled, terminated, timed out) may be
 * started again under its key. Other languages get the same with these policies; see docs/sms.md.
 */
import { createHash } from 'node:crypto';
import {
  type Client,
  type WorkflowHandle,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { Workflow } from '@temporalio/common';

/** The memo field holding a digest of the start's input (memos pass through the codec: encrypted with it). */
export const INPUT_DIGEST_MEMO = 'msgflowInputDigest';

/** The same key was given with another input: the first run stands, and this one was not started. */
export class KeyReusedError extends Error {
  override name = 'KeyReusedError';
  constructor(
    readonly key: string,
    readonly workflowId: string,
  ) {
    super(`key "${key}" was already used with another input (workflow ${workflowId}); use a new key for a new send`);
  }
}

/** Starts the workflow once per key, or hands back the run that key already has (see the module's note). */
export async function startOnce<T extends Workflow>(
  client: Client,
  workflowType: string,
  key: string,
  options: Omit<WorkflowStartOptions<T>, 'workflowIdConflictPolicy' | 'workflowIdReusePolicy' | 'memo'>,
): Promise<WorkflowHandle<T>> {
  const digest = inputDigest(options.args?.[0]);
  try {
    return await client.workflow.start<T>(workflowType, {
      ...options,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      memo: { [INPUT_DIGEST_MEMO]: digest },
    } as WorkflowStartOptions<T>);
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  const handle = client.workflow.getHandle<T>(options.workflowId);
  const { memo } = await handle.describe();
  // A run started without a digest (an earlier version, another language) is taken as the same input.
  const earlier = memo?.[INPUT_DIGEST_MEMO];
  if (earlier !== undefined && earlier !== digest) throw new KeyReusedError(key, options.workflowId);
  return handle;
}

/** SHA-256 of the input as JSON with its object keys sorted: the same input, however its keys were ordered. */
export function inputDigest(input: unknown): string {
  return createHash('sha256').update(JSON.stringify(input, sortedKeys)).digest('base64url');
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
