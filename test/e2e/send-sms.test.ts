/** sendSms end to end: real sandbox over HTTP, real ingress, real worker, real Temporal dev server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_STATUSES } from '../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';
import { startTestStack } from '../support/stack.js';

describe('sendSms', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('reports every final state, each from its webhook event, to the waiting workflow', async () => {
    const started = await stack.msgflow.sendSms({
      recipients: FINAL_STATUSES.map((status) => MAGIC_NUMBERS[status]),
      sender: 'ACME',
      message: 'Your order has shipped',
    });
    const result = await started.result();

    const byNumber = Object.fromEntries(result.messages.map((m) => [m.mobile_number, m.status]));
    expect(byNumber).toEqual(Object.fromEntries(FINAL_STATUSES.map((s) => [`+${MAGIC_NUMBERS[s]}`, s])));
    expect(result.messages.every((m) => m.source === 'webhook' && m.timestamp)).toBe(true);
    // The workflow's view agrees with the provider's records.
    for (const m of result.messages) {
      expect((await stack.messaging.messages.get(m.provider_message_id)).status).toBe(m.status);
    }
  });

  it('asks the provider when no final event arrives within the wait window', async () => {
    // Events for this send go nowhere: the account's webhook points at a closed port meanwhile.
    const [endpoint] = await stack.messaging.webhooks.list().toArray();
    await stack.messaging.webhooks.update(endpoint!.id, { url: 'http://127.0.0.1:9/nowhere' });
    try {
      const started = await stack.msgflow.sendSms({
        recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.neverFinal],
        sender: 'ACME',
        message: 'hello',
        waitWindowMs: 1500,
      });
      const result = await started.result();
      const byNumber = Object.fromEntries(result.messages.map((m) => [m.mobile_number, m]));
      expect(byNumber[`+${MAGIC_NUMBERS.delivered}`]).toMatchObject({ status: 'delivered', source: 'provider' });
      expect(byNumber[`+${MAGIC_NUMBERS.neverFinal}`]).toMatchObject({
        status: 'sent',
        source: 'timeout',
        timestamp: null,
      });
      // The answer the workflow acted on is the store's: reports show it, marked as asked of the provider.
      const asked = await stack.store.message(byNumber[`+${MAGIC_NUMBERS.delivered}`]!.provider_message_id);
      expect(asked?.final).toMatchObject({ status: 'delivered', source: 'provider', eventId: null });
      const open = await stack.store.message(byNumber[`+${MAGIC_NUMBERS.neverFinal}`]!.provider_message_id);
      expect(open?.final).toBeNull();
    } finally {
      await stack.messaging.webhooks.update(endpoint!.id, { url: stack.ingress.webhookUrl });
    }
  });

  it('starts nothing twice for the same key', async () => {
    const before = (await stack.messaging.balance.get()).balance;
    const input = { recipients: [MAGIC_NUMBERS.delivered], sender: 'ACME', message: 'once' };
    const first = await stack.msgflow.sendSms(input, { key: 'order-42' });
    const second = await stack.msgflow.sendSms(input, { key: 'order-42' });
    expect(second.workflowId).toBe(first.workflowId);
    const [a, b] = await Promise.all([first.result(), second.result()]);
    expect(b).toEqual(a);
    const after = (await stack.messaging.balance.get()).balance;
    expect(before - after).toBe(a.cost);
  });

  it('refuses invalid input before anything is started', async () => {
    await expect(stack.msgflow.sendSms({ recipients: ['12'], sender: 'ACME', message: 'x' })).rejects.toThrow(
      InvalidWorkflowInputError,
    );
    await expect(
      stack.msgflow.sendSms({ recipients: [MAGIC_NUMBERS.delivered], sender: '', message: 'x' }),
    ).rejects.toThrow(/sender/);
  });
});
