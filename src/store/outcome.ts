/**
 * A final outcome the store recorded (from a webhook event, or asked of the provider), as workflows see it:
 * what the ingress signals and what the activities answer when an outcome was already known.
 */
import type { MessageOutcome } from '../definitions/message-outcomes.js';
import type { FinalOutcome } from './types.js';

export function outcomeFromStore(outcome: FinalOutcome): MessageOutcome {
  return {
    providerMessageId: outcome.providerMessageId,
    status: outcome.status,
    timestamp: outcome.timestamp,
    source: outcome.source ?? 'webhook',
  };
}
