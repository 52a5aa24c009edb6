/**
 * Inside a workflow, the first final outcome heard for a message wins. The store forwards only the first final
 * state it recorded, so outcomes that conflict never come through the ingress; here they are signalled to the
 * workflows directly, one after the other, and each result must report the first. The sandbox's carrier takes
 * an hour to settle a message, so no real event races the signals.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/api/common.js';
import type { FinalStatus } from '../../src/api/constants.js';
import { type MessageOutcome, messageOutcomesSignal } from '../../src/definitions/message-outcomes.js';
import type { RunningStack } from '../../src/stack.js';
import { Msgflow } from '../../src/starter/index.js';
import { startTestStack, startTestWorker, type TestWorker } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const AN_HOUR_MS = 3_600_000;

function outcome(providerMessageId: string, status: FinalStatus, at: Date): MessageOutcome {
  return { providerMessageId, status, timestamp: formatTimestamp(at), source: 'webhook' };
}

describe('the first final outcome a workflow hears wins', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    stack = await startTestStack({ sandbox: { carrier: { finalMs: AN_HOUR_MS } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** The id of the message sent to `number` once the store knows `workflowId` waits for it. */
  async function registeredId(number: string, workflowId: string): Promise<string> {
    return waitFor(async () => {
      const [id] = await stack.store.messagesTo(`+${number}`);
      const stored = id ? await stack.store.message(id) : null;
      return stored?.waiters.some((w) => w.workflowId === workflowId) && id;
    }, `the message to ${number} registered for ${workflowId}`);
  }

  it('sendSms keeps the first of two conflicting outcomes', { timeout: 60_000 }, async () => {
    const [first, second] = ['2348051000001', '2348051000002'];
    const run = await stack.msgflow.sendSms({ recipients: [first, second], sender: 'ACME', message: 'first wins' });
    const [firstId, secondId] = [await registeredId(first, run.workflowId), await registeredId(second, run.workflowId)];
    const handle = stack.temporal.workflow.getHandle(run.workflowId);
    const earlier = new Date(Date.now() - 1000);
    await handle.signal(messageOutcomesSignal, [outcome(firstId, 'undelivered', earlier)]);
    await handle.signal(messageOutcomesSignal, [outcome(firstId, 'delivered', new Date())]);
    // The other message's outcomes come last, so the send cannot end before it heard both of the first's;
    // they conflict within one signal, where the first in the list wins.
    await handle.signal(messageOutcomesSignal, [
      outcome(secondId, 'expired', earlier),
      outcome(secondId, 'delivered', new Date()),
    ]);

    const result = await run.result();
    expect(result.messages.map((m) => [m.provider_message_id, m.status, m.timestamp])).toEqual([
      [firstId, 'undelivered', formatTimestamp(earlier)],
      [secondId, 'expired', formatTimestamp(earlier)],
    ]);
  });

  describe('awaitMessage', () => {
    let worker: TestWorker | undefined;
    afterAll(async () => {
      await worker?.stop();
    });

    it('keeps the first of two conflicting outcomes', { timeout: 60_000 }, async () => {
      // On a queue no worker polls yet: both signals are in its history before its first workflow task runs.
      const taskQueue = `${stack.taskQueue}-await`;
      const msgflow = new Msgflow(stack.temporal, taskQueue);
      const id = `msg_nobody_sends_${randomUUID()}`;
      const run = await msgflow.awaitMessage(id);
      const handle = stack.temporal.workflow.getHandle(run.workflowId);
      const earlier = new Date(Date.now() - 1000);
      await handle.signal(messageOutcomesSignal, [outcome(id, 'expired', earlier)]);
      await handle.signal(messageOutcomesSignal, [outcome(id, 'delivered', new Date())]);

      worker = await startTestWorker(stack, { store: stack.store, taskQueue });

      expect(await run.result()).toEqual(outcome(id, 'expired', earlier));
    });
  });
});
