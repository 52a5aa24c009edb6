/**
 * Counts each message's final state when its message-status workflow completes. A workflow interceptor,
 * bundled into the workflow sandbox: the SDK's workflow `metricMeter` emits through a sink that stays
 * silent during replay, so a state is counted once however often the history is replayed.
 */
import { metricMeter, workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { MessageOutcome } from '../../workflows/messages.js';
import { METRICS } from './names.js';

const MESSAGE_STATUS_WORKFLOW = 'messageStatus';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const result = await next(input);
        if (workflowInfo().workflowType === MESSAGE_STATUS_WORKFLOW) {
          const outcome = result as MessageOutcome;
          metricMeter
            .createCounter(METRICS.messageOutcomes, 'messages', 'Messages whose outcome became known, by status and how it became known')
            .add(1, { status: outcome.status, source: outcome.source });
        }
        return result;
      },
    },
  ],
});
