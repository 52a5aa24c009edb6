/**
 * The suppression list at send time, on the workflows' queue (it reads the message store and calls no
 * provider). A sending workflow asks which of its recipients opted out just before it sends and keeps the
 * answer in its history: a retried send then goes to exactly the recipients the first attempt chose, so its
 * idempotency key never meets a different request.
 */
import type { MessageStore } from '../src/store/index.js';

export interface ScreenRecipientsInput {
  /** Recipients as the send request takes them: international digits, no leading +. */
  recipients: string[];
}

export function createSuppressionActivities(store: Pick<MessageStore, 'suppressedAmong'>) {
  return {
    /** The recipients on the suppression list now, in the form they were given. */
    async screenRecipients({ recipients }: ScreenRecipientsInput): Promise<{ suppressed: string[] }> {
      const found = await store.suppressedAmong(recipients.map((digits) => `+${digits}`));
      return { suppressed: found.map((number) => number.slice(1)) };
    },
  };
}
