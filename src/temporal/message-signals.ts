/**
 * How anyone reaches a message's workflow: signal-with-start on the id derived from provider_message_id.
 * The ingress sends status events this way and senders their subscriptions, so the order they arrive in
 * never matters: no status event is ever lost.
 */
import type { Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import type { MessageStatusWorkflow } from '../definitions/message-status.js';
import { SA } from '../definitions/search-attributes.js';
import { messageWorkflowId } from '../definitions/workflow-ids.js';

export async function signalMessageWorkflow<Arg>(
  client: Client,
  taskQueue: string,
  providerMessageId: string,
  signal: SignalDefinition<[Arg]>,
  arg: Arg,
): Promise<void> {
  await client.workflow.signalWithStart<MessageStatusWorkflow, [Arg]>('messageStatus', {
    workflowId: messageWorkflowId(providerMessageId),
    taskQueue,
    args: [{ providerMessageId }],
    signal,
    signalArgs: [arg],
    typedSearchAttributes: [
      { key: SA.kind, value: 'message' },
      { key: SA.providerMessageId, value: providerMessageId },
    ],
    // Applies when this call creates the workflow; shown in the Temporal UI.
    staticSummary: `Delivery status of message ${providerMessageId}`,
  });
}
