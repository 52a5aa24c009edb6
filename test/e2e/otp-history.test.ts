/**
 * What an OTP session leaves in Temporal: its raw history, as the server stores it, never holds the code
 * (it travels sealed and is opened only inside the verify activity), and neither its workflow id nor its
 * search attributes hold the phone number. With an encryption key, the number is gone from the history
 * too. Each run checks that the probe does see plaintext when there is some (the number, unencrypted).
 */
import proto from '@temporalio/proto';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keyring.js';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

// Ten digits: a code this long cannot turn up by chance among the ids and timestamps of a history.
const LENGTH = 10;

/** The history's events exactly as the server returns them, serialized again: what a database dump would show. */
async function rawHistoryBytes(stack: RunningStack, workflowId: string): Promise<{ bytes: Buffer; events: number }> {
  const events: proto.temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await stack.temporal.workflowService.getWorkflowExecutionHistory({
      namespace: stack.temporal.options.namespace,
      execution: { workflowId },
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return {
    bytes: Buffer.from(proto.temporal.api.history.v1.History.encode({ events }).finish()),
    events: events.length,
  };
}

/**
 * Runs a session to `verified`, with a wrong code on the way (both codes go through the history sealed). Its
 * text is undelivered, so the session also hears the text's outcome and calls to read the code out.
 */
async function verifiedSession(stack: RunningStack, recipient: string) {
  await stack.admin.setOutcome(recipient, 'undelivered');
  const sent = await stack.msgflow.sendOtp({
    purpose: 'history-check',
    recipient,
    length: LENGTH,
    channels: ['sms', 'voice'],
  });
  const call = await waitFor(
    async () => (await stack.admin.inbox(recipient)).find((e) => e.kind === 'voice'),
    'the voice call',
  );
  const code = call.code!;
  const wrong = code.replace(/\d$/, (d) => String((Number(d) + 1) % 10));
  expect((await stack.msgflow.verifyOtp({ purpose: 'history-check', recipient, code: wrong })).status).toBe('invalid');
  expect((await stack.msgflow.verifyOtp({ purpose: 'history-check', recipient, code })).status).toBe('verified');
  const handle = stack.temporal.workflow.getHandle(sent.workflowId);
  const result = await handle.result();
  expect(result.channelAttempts?.map((a: { channel: string }) => a.channel)).toEqual(['sms', 'voice']);
  const description = await handle.describe();
  return { workflowId: sent.workflowId, code, wrong, result, description };
}

describe('OTP secrets in the workflow history', () => {
  let stack: RunningStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('never records the code; the number is in neither the workflow id nor the search attributes', async () => {
    stack = await startTestStack({ sandbox: { otpPerIpPerMinute: 10_000 } });
    const recipient = '2348012345690';
    const { workflowId, code, wrong, result, description } = await verifiedSession(stack, recipient);

    const { bytes, events } = await rawHistoryBytes(stack, workflowId);
    expect(events).toBeGreaterThan(5);
    expect(bytes.includes(code)).toBe(false);
    expect(bytes.includes(wrong)).toBe(false);
    // Control: without encryption the workflow input (with the number) is readable, so the probe works.
    expect(bytes.includes(recipient)).toBe(true);

    expect(JSON.stringify(result)).not.toContain(code);
    expect(workflowId).not.toContain(recipient);
    expect(workflowId.startsWith('otp:history-check:')).toBe(true);
    const searchAttributes = JSON.stringify(description.typedSearchAttributes);
    expect(searchAttributes).toContain('otp');
    expect(searchAttributes).not.toContain(recipient);
  });

  it('with an encryption key, holds neither the code nor the number', async () => {
    stack = await startTestStack({ sandbox: { otpPerIpPerMinute: 10_000 }, encryptionKey: `k1:${generateKey()}` });
    const recipient = '2348012345691';
    const { workflowId, code } = await verifiedSession(stack, recipient);
    const { bytes } = await rawHistoryBytes(stack, workflowId);
    expect([code, recipient].filter((secret) => bytes.includes(secret))).toEqual([]);
  });
});
