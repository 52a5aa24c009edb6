/**
 * Operators find runs in the Temporal UI: every run msgflow starts carries its search attributes and a
 * summary, a campaign shows its phase, and the queries the docs give find them on the real dev server
 * (visibility is eventually consistent, so queries are polled). No attribute holds a number, and no
 * workflow is started per message: a message's state lives in the message store.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keyring.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { SA } from '../../src/definitions/search-attributes.js';
import { startTestStack } from '../support/stack.js';
import { eventually, listIds } from './support.js';

/** Distinct valid numbers that the sandbox delivers. */
const numbers = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => `23480${String(30_000_000 + from + i)}`);

/** Waits until `query` returns exactly `expected` (sorted ids). */
async function expectQuery(stack: RunningStack, query: string, expected: string[], timeoutMs?: number) {
  const found = await eventually(
    async () => {
      const ids = await listIds(stack.temporal, query);
      return JSON.stringify(ids) === JSON.stringify(expected) ? ids : undefined;
    },
    `query ${query} to return ${expected.join(', ')}`,
    timeoutMs,
  );
  expect(found, query).toEqual(expected);
}

describe('search attributes and summaries', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack({ encryptionKey: generateKey() });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('finds sends by kind and sender, and waits by provider message id', async () => {
    const key = randomUUID();
    const started = await stack.msgflow.sendSms(
      {
        recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered],
        sender: 'ACME',
        message: 'Your table is ready',
      },
      { key },
    );
    expect(started.workflowId).toBe(`sms:${key}`);
    const result = await started.result();
    const undelivered = result.messages.find((m) => m.mobile_number === `+${MAGIC_NUMBERS.undelivered}`)!;
    const awaited = await stack.msgflow.awaitMessage(undelivered.provider_message_id);
    expect(await awaited.result()).toMatchObject({ status: 'undelivered' });

    const tq = `TaskQueue = '${stack.taskQueue}'`;
    await expectQuery(stack, `${tq} AND MsgflowKind = 'sms' AND MsgflowSender = 'ACME'`, [started.workflowId]);
    await expectQuery(
      stack,
      `MsgflowKind = 'await' AND MsgflowProviderMessageId = '${undelivered.provider_message_id}'`,
      [awaited.workflowId],
    );
    // Only the two runs started here: no workflow per message.
    await expectQuery(stack, tq, [started.workflowId, awaited.workflowId].sort());
  });

  it('gives each run a summary and attributes without personal data', async () => {
    const started = await stack.msgflow.sendSms({
      recipients: [MAGIC_NUMBERS.delivered],
      sender: 'MSGFLOW',
      message: 'Summary check',
    });
    const result = await started.result();
    const messageId = result.messages[0]!.provider_message_id;
    const awaited = await stack.msgflow.awaitMessage(messageId);
    await awaited.result();

    const describeRun = (id: string) => stack.temporal.workflow.getHandle(id).describe();
    const sms = await describeRun(started.workflowId);
    expect(await sms.staticSummary()).toBe('SMS from MSGFLOW to 1 recipient(s)');
    expect(sms.typedSearchAttributes.get(SA.kind)).toBe('sms');
    expect(sms.typedSearchAttributes.get(SA.sender)).toBe('MSGFLOW');
    expect(sms.typedSearchAttributes.get(SA.providerMessageId)).toBeUndefined();

    const wait = await describeRun(awaited.workflowId);
    expect(wait.workflowId).toMatch(new RegExp(`^await:${messageId}:`));
    expect(await wait.staticSummary()).toBe(`Await the final state of message ${messageId}`);
    expect(wait.typedSearchAttributes.get(SA.kind)).toBe('await');
    expect(wait.typedSearchAttributes.get(SA.providerMessageId)).toBe(messageId);

    for (const run of [sms, wait]) {
      const attributes = JSON.stringify(run.searchAttributes);
      expect(attributes).toContain('Msgflow');
      expect(attributes).not.toContain('2025550100');
      expect(run.workflowId).not.toContain('2025550100');
    }
  });
});

describe('campaign search attributes', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    // Each send is held 150 ms by the provider, so a campaign of one-recipient chunks runs long enough to pause.
    stack = await startTestStack({ sandbox: { sendLatencyMs: 150 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it(
    'shows a campaign by kind, key and phase (paused while paused, completed at the end), without a workflow per message',
    { timeout: 120_000 },
    async () => {
      const quick = `quick-${randomUUID().slice(0, 8)}`;
      const done = await stack.msgflow.startCampaign(
        {
          sender: 'ACME',
          message: 'Your payment is due on Monday',
          audience: {
            type: 'inline',
            recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered, MAGIC_NUMBERS.failed],
          },
        },
        { key: quick },
      );
      expect((await done.result()).sent).toBe(3);
      await expectQuery(
        stack,
        `MsgflowKind = 'campaign' AND MsgflowCampaignKey = '${quick}' AND MsgflowCampaignPhase = 'completed'`,
        [`campaign:${quick}`],
      );
      const described = await stack.temporal.workflow.getHandle(done.workflowId).describe();
      expect(described.typedSearchAttributes.get(SA.sender)).toBe('ACME');

      const slow = `slow-${randomUUID().slice(0, 8)}`;
      const paused = await stack.msgflow.startCampaign(
        {
          sender: 'ACME',
          message: 'Your payment is due on Tuesday',
          audience: { type: 'inline', recipients: numbers(20) },
          chunkSize: 1,
        },
        { key: slow },
      );
      expect(await paused.pause('ops check')).toMatchObject({ paused: true });
      // The phase is recorded at most once per 10 s, so a pause right after a start shows within about that.
      await expectQuery(
        stack,
        `MsgflowKind = 'campaign' AND MsgflowCampaignKey = '${slow}' AND MsgflowCampaignPhase = 'paused'`,
        [`campaign:${slow}`],
        40_000,
      );
      await paused.resume();
      expect((await paused.result()).sent).toBe(20);
      await expectQuery(stack, `MsgflowCampaignKey = '${slow}' AND MsgflowCampaignPhase = 'completed'`, [
        `campaign:${slow}`,
      ]);

      // Both campaigns are all this stack's task queue ever ran: 23 messages, no workflow for any of them.
      await expectQuery(stack, `TaskQueue = '${stack.taskQueue}'`, [`campaign:${quick}`, `campaign:${slow}`].sort());
    },
  );
});
