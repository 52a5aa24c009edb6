/**
 * The webhook ingress end to end: signed events from the sandbox and from the test itself reach the
 * message workflows through a real Temporal server; bad ones reach nothing.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { formatTimestamp } from '../../src/api/common.js';
import type { FinalStatus, MessageStatusEvent } from '../../src/api/events.js';
import { signWebhook, verifyWebhook } from '../../src/api/signature.js';
import { startIngress } from '../../src/ingress/server.js';
import { temporalSignaler } from '../../src/ingress/signaler.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { messageWorkflowId } from '../../src/definitions/workflow-ids.js';
import { outcomeQuery } from '../../src/definitions/message-status.js';
import { startTestStack } from '../support/stack.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const NUMBER = `+${MAGIC_NUMBERS.delivered}`;

function statusEvent(providerMessageId: string, status: FinalStatus, at = new Date()): MessageStatusEvent {
  return {
    event: `message.${status}`,
    mobile_number: NUMBER,
    provider_message_id: providerMessageId,
    status,
    timestamp: formatTimestamp(at),
  };
}

describe('webhook ingress', () => {
  let stack: RunningStack;
  const post = async (body: unknown, { secret = stack.webhookSecret, sentAt = Date.now() } = {}) => {
    const raw = JSON.stringify(body);
    const headers = signWebhook([secret], `msg_${randomUUID()}`, Math.floor(sentAt / 1000), raw);
    return fetch(stack.ingress.webhookUrl, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: raw,
    });
  };
  const outcomeOf = (id: string) => stack.temporal.workflow.getHandle(messageWorkflowId(id)).query(outcomeQuery);
  const signalsReceived = async (workflowId: string, name: string) => {
    const history = await stack.temporal.workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === name).length;
  };

  beforeAll(async () => {
    // Retries long enough to outlast the Temporal outage below (and gRPC's reconnect backoff after it).
    stack = await startTestStack({
      sandbox: { webhooks: { retryScheduleMs: [50, 100, 200, 400, 800, 1600, 3200, 6400] } },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('holds an event that arrives before anyone waits, and applies duplicates and later conflicts once', async () => {
    const id = `early-${randomUUID()}`;
    expect((await post(statusEvent(id, 'undelivered'))).status).toBe(200);
    expect((await post(statusEvent(id, 'undelivered'))).status).toBe(200); // duplicate
    expect((await post(statusEvent(id, 'delivered'))).status).toBe(200); // out of order: the first final state wins
    expect(await outcomeOf(id)).toMatchObject({ status: 'undelivered', source: 'webhook' });

    const waiter = await stack.msgflow.awaitMessage(id);
    expect(await waiter.result()).toMatchObject({ providerMessageId: id, status: 'undelivered', source: 'webhook' });
    expect(await signalsReceived(waiter.workflowId, 'messageOutcome')).toBe(1);
    expect(await signalsReceived(messageWorkflowId(id), 'statusEvent')).toBe(3);
  });

  it('signals every event of a batch body', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const statuses: FinalStatus[] = ['delivered', 'failed', 'expired'];
    const response = await post({
      type: 'message.status.batch',
      events: ids.map((id, i) => statusEvent(id, statuses[i]!)),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: 3 });
    for (const [i, id] of ids.entries()) expect(await outcomeOf(id)).toMatchObject({ status: statuses[i] });
  });

  it('delivers the sandbox batch bodies of a batch-enabled endpoint', async () => {
    const [endpoint] = await stack.messaging.webhooks.list().toArray();
    await stack.messaging.webhooks.update(endpoint!.id, { batch: true });
    try {
      const started = await stack.msgflow.sendSms({
        recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.rejected, MAGIC_NUMBERS.expired],
        sender: 'ACME',
        message: 'batched',
      });
      const result = await started.result();
      expect(result.messages.map((m) => m.status).sort()).toEqual(['delivered', 'expired', 'rejected']);
      expect(result.messages.every((m) => m.source === 'webhook')).toBe(true);
    } finally {
      await stack.messaging.webhooks.update(endpoint!.id, { batch: false });
    }
  });

  it('rejects forged and stale deliveries and signals nothing', async () => {
    const forgedId = `forged-${randomUUID()}`;
    const forged = await post(statusEvent(forgedId, 'delivered'), {
      secret: 'whsec_' + Buffer.from('not the secret').toString('base64'),
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ code: 'bad_signature' });

    const staleId = `stale-${randomUUID()}`;
    const stale = await post(statusEvent(staleId, 'delivered'), { sentAt: Date.now() - 10 * 60 * 1000 });
    expect(stale.status).toBe(401);
    expect(await stale.json()).toMatchObject({ code: 'stale_timestamp' });

    const unsigned = await fetch(stack.ingress.webhookUrl, {
      method: 'POST',
      body: JSON.stringify(statusEvent(forgedId, 'delivered')),
    });
    expect(unsigned.status).toBe(401);

    for (const id of [forgedId, staleId]) {
      await expect(stack.temporal.workflow.getHandle(messageWorkflowId(id)).describe()).rejects.toThrow(
        WorkflowNotFoundError,
      );
    }
  });

  it('answers 4xx to malformed bodies, signalling nothing', async () => {
    const notJson = 'not json';
    const headers = signWebhook([stack.webhookSecret], 'msg_bad', Math.floor(Date.now() / 1000), notJson);
    expect((await fetch(stack.ingress.webhookUrl, { method: 'POST', headers, body: notJson })).status).toBe(400);

    const id = `bad-${randomUUID()}`;
    const mismatched = await post({ ...statusEvent(id, 'delivered'), status: 'failed' });
    expect(mismatched.status).toBe(422);
    const halfBad = await post({
      type: 'message.status.batch',
      events: [statusEvent(id, 'delivered'), { event: 'message.delivered' }],
    });
    expect(halfBad.status).toBe(422);
    await expect(stack.temporal.workflow.getHandle(messageWorkflowId(id)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
  });

  it('answers 503 while Temporal is unreachable, and the provider retry delivers the event afterwards', async () => {
    const { namespace } = inject('temporal');
    const proxy = await startTcpProxy(inject('temporal').address);
    const connection = await Connection.connect({ address: proxy.address });
    const answers: number[] = [];
    let secret = '';
    // The ingress under test reaches Temporal only through the proxy; the verifier learns its secret below.
    const ingress = await startIngress({
      verifier: { verify: (headers, body) => verifyWebhook(headers, body, { secrets: [secret] }) },
      signaler: temporalSignaler({
        client: new Client({ connection, namespace }),
        taskQueue: stack.taskQueue,
        callTimeoutMs: 1000,
        attempts: 1,
      }),
      hooks: { onDelivery: (outcome) => answers.push(outcome.status) },
    });
    const [endpoint] = await stack.messaging.webhooks.list().toArray();
    await stack.messaging.webhooks.update(endpoint!.id, { url: 'http://127.0.0.1:9/nowhere' });
    const registration = await stack.messaging.webhooks.create({ url: ingress.webhookUrl });
    secret = registration.secret;
    try {
      await proxy.cut();
      const sent = await stack.messaging.sms.send({
        recipients: [MAGIC_NUMBERS.delivered],
        sender: 'ACME',
        message: 'while down',
      });
      const id = sent.messages[0]!.provider_message_id;
      await waitFor(() => answers.includes(503), 'a 503 from the ingress', { timeoutMs: 30_000, intervalMs: 25 });
      await proxy.restore();
      await waitFor(() => answers.includes(200), 'a 200 from the ingress', { timeoutMs: 30_000, intervalMs: 25 });

      expect(answers[0]).toBe(503);
      const waiter = await stack.msgflow.awaitMessage(id);
      expect(await waiter.result()).toMatchObject({ status: 'delivered', source: 'webhook' });
    } finally {
      await stack.messaging.webhooks.delete(registration.id);
      await stack.messaging.webhooks.update(endpoint!.id, { url: stack.ingress.webhookUrl });
      await ingress.close();
      await connection.close();
      await proxy.close();
    }
  });
});
