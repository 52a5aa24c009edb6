/**
 * msgflow as a Nexus service end to end: a caller workflow in a namespace of its own, run by a worker with
 * Temporal's default converter, calls msgflow through an endpoint that targets the stack's queue. The stack
 * encrypts its payloads; the caller never has the key.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { NexusOperationFailure } from '@temporalio/common';
import { HandlerError } from 'nexus-rpc';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keyring.js';
import { smsWorkflowId } from '../../src/definitions/workflow-ids.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { ENCRYPTED_ENCODING } from '../../src/temporal/codec.js';
import { type NexusCaller, startNexusCaller } from '../support/nexus-caller/index.js';
import { latestOtpCode, wrongOtpCode } from '../support/otp-inbox.js';
import { startTestStack } from '../support/stack.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Every payload's `metadata.encoding` anywhere in the events (or other protobuf objects). */
function encodings(events: readonly object[]): string[] {
  const found: string[] = [];
  const walk = (value: unknown) => {
    if (!value || typeof value !== 'object') return;
    if (value instanceof Uint8Array) return;
    const record = value as Record<string, unknown>;
    const metadata = record.metadata as Record<string, Uint8Array> | undefined;
    if (metadata?.encoding instanceof Uint8Array && 'data' in record)
      found.push(Buffer.from(metadata.encoding).toString('utf8'));
    for (const child of Object.values(record)) walk(child);
  };
  for (const event of events) walk(event);
  return found;
}

/** A failure and its causes, outermost first. */
function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let e = error; e instanceof Error; e = e.cause) chain.push(e);
  return chain;
}

describe('msgflow as a Nexus service', () => {
  let stack: RunningStack;
  let caller: NexusCaller;

  beforeAll(async () => {
    stack = await startTestStack({
      nexus: true,
      encryptionKey: generateKey(),
      // Every request comes from 127.0.0.1: lift the provider's per-IP OTP limit.
      sandbox: { otpPerIpPerMinute: 10_000 },
    });
    caller = await startNexusCaller({ namespace: stack.temporal.options.namespace, taskQueue: stack.taskQueue });
  });
  afterAll(async () => {
    await caller?.close();
    await stack?.close();
  });

  async function callerHistory(workflowId: string): Promise<HistoryEvent[]> {
    return (await caller.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  }

  it('answers an SMS with each final state, plain for the caller and sealed in msgflow', async () => {
    const [delivered, undelivered] = await Promise.all(
      [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered].map((number) =>
        caller.call('sendSms', { recipients: [number], sender: 'ACME', message: 'Your order has shipped' }),
      ),
    );
    expect(delivered!.result.messages).toMatchObject([
      { mobile_number: `+${MAGIC_NUMBERS.delivered}`, status: 'delivered' },
    ]);
    expect(undelivered!.result.messages).toMatchObject([
      { mobile_number: `+${MAGIC_NUMBERS.undelivered}`, status: 'undelivered' },
    ]);

    // The caller's history holds the input and the answer in its own (here: no) encoding, none under msgflow's key.
    const history = await callerHistory(delivered!.workflowId);
    const completed = history.find((e) => e.nexusOperationCompletedEventAttributes);
    expect(completed).toBeDefined();
    expect(encodings(history)).not.toContain(ENCRYPTED_ENCODING);
    expect(encodings([completed!])).toEqual(['json/plain']);

    // msgflow's own run of that send (keyed by the Nexus request) keeps its input and result encrypted.
    const requestId = history.find((e) => e.nexusOperationScheduledEventAttributes)!
      .nexusOperationScheduledEventAttributes!.requestId!;
    const run = await stack.temporal.workflow.getHandle(smsWorkflowId(`nexus-${requestId}`)).fetchHistory();
    const started = run.events!.find((e) => e.workflowExecutionStartedEventAttributes)!;
    const finished = run.events!.find((e) => e.workflowExecutionCompletedEventAttributes)!;
    expect(encodings([started.workflowExecutionStartedEventAttributes!.input!])).toEqual([ENCRYPTED_ENCODING]);
    expect(encodings([finished])).toEqual([ENCRYPTED_ENCODING]);
  });

  it('waits out a final state later than one Nexus request, sending once', async () => {
    // The server gives each attempt 10 s: the handler answers "retry" before that, and the retried request
    // (same request id) waits on the same send.
    const number = '2348012345622';
    await stack.admin.setOutcome(number, 'delivered', 15_000);
    const { result } = await caller.call('sendSms', { recipients: [number], sender: 'ACME', message: 'Later' });
    expect(result.messages).toMatchObject([{ mobile_number: `+${number}`, status: 'delivered' }]);
    const charges = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.recipient === `+${number}`);
    expect(charges).toHaveLength(1);
  });

  it('sends an OTP and verifies it, refusing a wrong code', async () => {
    const recipient = '2348012345611';
    const { result: sent } = await caller.call('sendOtp', { purpose: 'login', recipient });
    expect(sent).toMatchObject({ status: 'sent', sends: 1 });
    const code = await latestOtpCode(stack.admin, recipient);
    const wrong = wrongOtpCode(code);

    const refused = await caller.call('verifyOtp', { purpose: 'login', recipient, code: wrong });
    expect(refused.result).toMatchObject({ status: 'invalid' });
    const verified = await caller.call('verifyOtp', { purpose: 'login', recipient, code });
    expect(verified.result).toEqual({ status: 'verified', attemptsRemaining: expect.any(Number) });
    expect(encodings(await callerHistory(verified.workflowId))).not.toContain(ENCRYPTED_ENCODING);
  });

  it('refuses a bad number at once, naming the field, in a failure the caller reads', async () => {
    const failure = await caller
      .call('sendSms', { recipients: ['not-a-number'], sender: 'ACME', message: 'hello' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const chain = causes(failure);
    expect(chain[1]).toBeInstanceOf(NexusOperationFailure);
    // The handler's refusal, typed and not retried: the operation failed at its first attempt.
    const refusal = chain.find((e) => e instanceof HandlerError && e.type === 'BAD_REQUEST');
    expect(refusal?.message).toContain('Invalid SMS: recipients.0 not a phone number');
  });
});
