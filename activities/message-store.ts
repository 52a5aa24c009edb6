/**
 * Activities over the message store: a workflow starts waiting for messages sent by another client, reads
 * outcomes once more when its wait window ends, and stops waiting when it is done. Each records or reads
 * for the calling workflow, named by the activity's own context.
 */
import { Context } from '@temporalio/activity';
import type { MessageStore } from '../src/store/index.js';
import { outcomeFromStore } from '../src/store/outcome.js';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';
import { activeTraceParent } from '../src/tracing/spans.js';

export interface MessageIds {
  providerMessageIds: string[];
}

/** The workflow an activity runs for: the waiter its messages are recorded under. */
export function callingWorkflowId(): string {
  const execution = Context.current().info.workflowExecution;
  if (!execution) throw new Error('this activity records messages for its workflow, and runs only within one');
  return execution.workflowId;
}

export function createMessageStoreActivities(store: MessageStore) {
  const waiter = callingWorkflowId;
  return {
    /** Records the calling workflow as waiting for these messages; answers the outcomes already known. */
    async awaitMessages({ providerMessageIds }: MessageIds): Promise<MessageOutcome[]> {
      const traceParent = activeTraceParent();
      const known = await store.register(
        waiter(),
        providerMessageIds.map((providerMessageId) => ({ providerMessageId, traceParent })),
      );
      return known.map(outcomeFromStore);
    },

    async readOutcomes({ providerMessageIds }: MessageIds): Promise<MessageOutcome[]> {
      return (await store.outcomes(providerMessageIds)).map(outcomeFromStore);
    },

    /** The calling workflow stops waiting for these messages, or for all of its messages. */
    async releaseMessages({ providerMessageIds }: Partial<MessageIds>): Promise<void> {
      await store.release(waiter(), providerMessageIds);
    },
  };
}
