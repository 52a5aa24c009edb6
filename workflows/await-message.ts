/**
 * Waits for the final state of one provider message, whoever sent it: for backend services that send
 * through their own client and want a durable wait, and for operators re-checking a message.
 */
import { condition } from '@temporalio/workflow';
import { DEFAULT_WAIT_WINDOW_MS } from '../src/api/constants.js';
import type { AwaitMessageInput } from '../src/api/workflow-io.js';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';
import { FirstOutcomes } from './first-outcomes.js';
import { awaitMessages, onMessageOutcomes, releaseMessages, settleOpenMessages } from './message-outcomes.js';
import { countMessageOutcomes } from './metrics.js';
import { checkFirstInput } from './input-check.js';

export async function awaitMessage(input: AwaitMessageInput): Promise<MessageOutcome> {
  checkFirstInput('awaitMessage', input);
  const { providerMessageId, waitWindowMs } = input;
  const outcomes = new FirstOutcomes();
  const keep = (list: MessageOutcome[]) =>
    countMessageOutcomes(outcomes.keep(list.filter((o) => o.providerMessageId === providerMessageId)));
  onMessageOutcomes(keep);

  keep(await awaitMessages([providerMessageId]));
  if (!(await condition(() => outcomes.get(providerMessageId) !== undefined, waitWindowMs ?? DEFAULT_WAIT_WINDOW_MS))) {
    keep(await settleOpenMessages([providerMessageId]));
  }
  await releaseMessages();
  return outcomes.get(providerMessageId)!;
}
