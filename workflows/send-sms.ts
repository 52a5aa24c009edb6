/**
 * Sends one text to one or a few recipients and waits for each message's final delivery state.
 * Large sends are campaigns (`smsCampaign`); this is the workflow a backend service awaits for one send.
 * A number given twice is sent once (reported in `duplicates`), and recipients on the suppression list are
 * left out; when none is left, nothing is sent or charged.
 */
import { condition, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createProviderActivities } from '../activities/provider.js';
import { DEFAULT_WAIT_WINDOW_MS } from '../src/api/constants.js';
import type { SendSmsInput, SendSmsResult } from '../src/api/workflow-io.js';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';
import { INTERACTIVE_PRIORITY, providerTaskQueue } from '../src/definitions/task-queues.js';
import { idempotencyKey } from '../src/definitions/workflow-ids.js';
import { FirstOutcomes } from './first-outcomes.js';
import { checkFirstInput } from './input-check.js';
import { onMessageOutcomes, releaseMessages, settleOpenMessages } from './message-outcomes.js';
import { countMessageOutcomes } from './metrics.js';
import { PROVIDER_ACTIVITY_OPTIONS } from './options.js';
import { checksSuppressionList, screenRecipients, unscreened } from './suppression.js';

/** Runs recorded before a number given twice was sent once replay sending it as given. */
const ONCE_PER_NUMBER_PATCH = 'sms-once-per-number';

export async function sendSms(input: SendSmsInput): Promise<SendSmsResult> {
  checkFirstInput('sendSms', input);
  const { recipients, duplicates } = patched(ONCE_PER_NUMBER_PATCH)
    ? onceEach(input.recipients)
    : { recipients: input.recipients, duplicates: [] };
  const outcomes = new FirstOutcomes();
  const keep = (list: MessageOutcome[]) => countMessageOutcomes(outcomes.keep(list));
  onMessageOutcomes(keep);

  const { workflowId, taskQueue } = workflowInfo();
  const provider = proxyActivities<ReturnType<typeof createProviderActivities>>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: providerTaskQueue(taskQueue),
    // A service is awaiting this send: it goes before campaign chunks queued on the provider queue.
    priority: INTERACTIVE_PRIORITY,
  });

  const screened = checksSuppressionList() ? await screenRecipients(recipients) : unscreened(recipients);
  const suppressed = screened.suppressed.map((digits) => `+${digits}`);
  const reported = { suppressed, duplicates: duplicates.map((digits) => `+${digits}`) };
  if (screened.send.length === 0) return { campaignId: null, cost: 0, currency: null, messages: [], ...reported };

  // The activity records the ids in the message store, awaited by this workflow, before it completes.
  const { sent, alreadyFinal } = await provider.sendSms(
    { recipients: screened.send, sender: input.sender, message: input.message },
    idempotencyKey(workflowId, 'send'),
  );
  keep(alreadyFinal);
  const ids = sent.messages.map((m) => m.provider_message_id);
  const open = () => outcomes.open(ids);

  if (!(await condition(() => open().length === 0, input.waitWindowMs ?? DEFAULT_WAIT_WINDOW_MS))) {
    keep(await settleOpenMessages(open()));
  }
  await releaseMessages();

  return {
    campaignId: sent.campaign_id,
    cost: sent.cost,
    currency: sent.currency,
    messages: sent.messages.map((m) => {
      const outcome = outcomes.get(m.provider_message_id);
      return {
        provider_message_id: m.provider_message_id,
        mobile_number: m.mobile_number,
        status: outcome?.status ?? 'unknown',
        timestamp: outcome?.timestamp ?? null,
        source: outcome?.source ?? 'timeout',
      };
    }),
    ...reported,
  };
}

/** The recipients with each number once, in the order first given, and the numbers given more than once. */
function onceEach(given: string[]): { recipients: string[]; duplicates: string[] } {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const number of given) (seen.has(number) ? duplicates : seen).add(number);
  return { recipients: [...seen], duplicates: [...duplicates] };
}
