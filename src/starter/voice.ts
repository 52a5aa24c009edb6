/** Voice calls for backend services: start a `voiceCall` workflow and await its final state. */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { VoiceCallInput, VoiceCallResult } from '../api/otp-io.js';
import { SA } from '../definitions/search-attributes.js';
import { voiceWorkflowId } from '../definitions/workflow-ids.js';
import type { voiceCall } from '../../workflows/voice.js';
import { startOnce } from './start-once.js';
import type { StartedWorkflow } from './started-workflow.js';

/** `key` is the business key: the same key reaches the same workflow, and never calls twice. */
export async function startVoiceCall(
  client: Client,
  taskQueue: string,
  input: VoiceCallInput,
  key: string = randomUUID(),
): Promise<StartedWorkflow<VoiceCallResult>> {
  const handle = await startOnce<typeof voiceCall>(client, 'voiceCall', key, {
    workflowId: voiceWorkflowId(key),
    taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: SA.kind, value: 'voice' },
      ...(input.sender ? [{ key: SA.sender, value: input.sender }] : []),
    ],
    staticSummary: `Voice call${input.sender ? ` from ${input.sender}` : ''}, followed to its final state`,
  });
  return { workflowId: handle.workflowId, result: () => handle.result() };
}
