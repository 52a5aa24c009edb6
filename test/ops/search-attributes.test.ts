/**
 * Operators find runs in the Temporal UI: every run msgflow starts carries its search attributes and a
 * summary, and the queries the README gives (Operations) find them on the real dev server (visibility is
 * eventually consistent, so queries are polled). No attribute holds a number.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keyring.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { signalMessageWorkflow } from '../../src/temporal/message-signals.js';
import { SA } from '../../src/definitions/search-attributes.js';
import { messageWorkflowId } from '../../src/definitions/workflow-ids.js';
import { subscribeSignal } from '../../src/definitions/message-status.js';
import { startTestStack } from '../support/stack.js';
import { eventually, listIds } from './support.js';

describe('search attributes and summaries', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack({ encryptionKey: generateKey() });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('finds sends, messages by id and final status, and the messages a campaign subscribes to', async () => {
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
    const idOf = (number: string) => result.messages.find((m) => m.mobile_number === `+${number}`)!.provider_message_id;
    const delivered = idOf(MAGIC_NUMBERS.delivered);
    const undelivered = idOf(MAGIC_NUMBERS.undelivered);

    // A campaign subscribing to these messages (as smsCampaign does) tags them with its key.
    const campaignKey = `reminders-${randomUUID().slice(0, 8)}`;
    for (const id of [delivered, undelivered]) {
      await signalMessageWorkflow(stack.temporal, stack.taskQueue, id, subscribeSignal, {
        workflowId: `campaign:${campaignKey}`,
      });
    }

    const tq = `TaskQueue = '${stack.taskQueue}'`;
    const expectations: Array<[string, string[]]> = [
      [`${tq} AND MsgflowKind = 'sms' AND MsgflowSender = 'ACME'`, [started.workflowId]],
      [`MsgflowKind = 'message' AND MsgflowProviderMessageId = '${delivered}'`, [messageWorkflowId(delivered)]],
      [`${tq} AND MsgflowKind = 'message' AND MsgflowFinalStatus = 'undelivered'`, [messageWorkflowId(undelivered)]],
      [
        `MsgflowCampaignKey = '${campaignKey}' AND MsgflowFinalStatus = 'undelivered'`,
        [messageWorkflowId(undelivered)],
      ],
      [`MsgflowCampaignKey = '${campaignKey}'`, [messageWorkflowId(delivered), messageWorkflowId(undelivered)].sort()],
    ];
    for (const [query, expected] of expectations) {
      const found = await eventually(
        async () => {
          const ids = await listIds(stack.temporal, query);
          return JSON.stringify(ids) === JSON.stringify(expected) ? ids : undefined;
        },
        `query ${query} to return ${expected.join(', ')}`,
      );
      expect(found, query).toEqual(expected);
    }
  });

  it('finds a real campaign and, by its key, its undelivered messages', async () => {
    const key = `reminders-${randomUUID().slice(0, 8)}`;
    const campaign = await stack.msgflow.startCampaign(
      {
        sender: 'ACME',
        message: 'Your payment is due on Monday',
        audience: {
          type: 'inline',
          recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered, MAGIC_NUMBERS.failed],
        },
      },
      { key },
    );
    await campaign.result();

    const campaignRuns = await eventually(async () => {
      const ids = await listIds(stack.temporal, `MsgflowKind = 'campaign' AND MsgflowCampaignKey = '${key}'`);
      return ids.length === 1 ? ids : undefined;
    }, 'the campaign by its key');
    expect(campaignRuns).toEqual([`campaign:${key}`]);

    const query = `MsgflowKind = 'message' AND MsgflowCampaignKey = '${key}' AND MsgflowFinalStatus = 'undelivered'`;
    const [undelivered] = await eventually(async () => {
      const ids = await listIds(stack.temporal, query);
      return ids.length === 1 ? ids : undefined;
    }, query);
    // The provider agrees that this message, and only it, was undelivered.
    expect((await stack.messaging.messages.get(undelivered!.slice('message:'.length))).status).toBe('undelivered');
    const all = await eventually(async () => {
      const ids = await listIds(
        stack.temporal,
        `MsgflowKind = 'message' AND MsgflowCampaignKey = '${key}' AND MsgflowFinalStatus IS NOT NULL`,
      );
      return ids.length === 3 ? ids : undefined;
    }, "all three of the campaign's messages with a final status");
    expect(all).toContain(undelivered);
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

    const message = await describeRun(messageWorkflowId(messageId));
    expect(await message.staticSummary()).toBe(`Delivery status of message ${messageId}`);
    expect(message.typedSearchAttributes.get(SA.finalStatus)).toBe('delivered');

    const wait = await describeRun(awaited.workflowId);
    expect(wait.workflowId).toMatch(new RegExp(`^await:${messageId}:`));
    expect(await wait.staticSummary()).toBe(`Await the final state of message ${messageId}`);

    for (const run of [sms, message, wait]) {
      const attributes = JSON.stringify(run.searchAttributes);
      expect(attributes).toContain('Msgflow');
      expect(attributes).not.toContain('2025550100');
      expect(run.workflowId).not.toContain('2025550100');
    }
  });
});
