/**
 * msgflow as a Nexus service end to end: a caller workflow in a namespace of its own, run by a worker with
 * Temporal's default converter, calls msgflow through an endpoint that targets the stack's queue. The stack
 * encrypts its payloads; the caller never has the key.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure, NexusOperationFailure } from '@temporalio/common';
import { HandlerError } from 'nexus-rpc';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keyring.js';
import { campaignWorkflowId, nexusCampaignWorkflowId, smsWorkflowId } from '../../src/definitions/workflow-ids.js';
import { MAGIC_NUMBERS, VOICE_MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { ENCRYPTED_ENCODING } from '../../src/temporal/codec.js';
import { type NexusCaller, startNexusCaller } from '../support/nexus-caller/index.js';
import { latestOtpCode, wrongOtpCode } from '../support/otp-inbox.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

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

/** Every payload's data anywhere in the events, as text (plain JSON payloads read as their JSON). */
function payloadTexts(events: readonly object[]): string[] {
  const found: string[] = [];
  const walk = (value: unknown) => {
    if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
    const record = value as Record<string, unknown>;
    if (record.data instanceof Uint8Array && record.metadata) found.push(Buffer.from(record.data).toString('utf8'));
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

    // Linked in the UI both ways: msgflow's run points at the caller's workflow, the caller's event at the run.
    expect((run.events![0]!.links ?? []).map((l) => l.workflowEvent)).toContainEqual(
      expect.objectContaining({ namespace: caller.namespace, workflowId: delivered!.workflowId }),
    );
    expect((completed!.links ?? []).map((l) => l.workflowEvent?.workflowId)).toEqual([
      smsWorkflowId(`nexus-${requestId}`),
    ]);
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

  describe('campaigns', () => {
    const numbers = (count: number, from: number) =>
      Array.from({ length: count }, (_, i) => `23480${String(20_000_000 + from + i)}`);
    const chargedTo = async (recipients: string[]) => {
      const wanted = new Set(recipients.map((r) => `+${r}`));
      return (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms' && wanted.has(e.recipient!));
    };
    const campaignHistory = async (key: string) =>
      (await stack.temporal.workflow.getHandle(campaignWorkflowId(key)).fetchHistory()).events ?? [];

    it('runs a campaign to its end once per key, its summary plain for the caller', { timeout: 120_000 }, async () => {
      const key = `nexus-${randomUUID()}`;
      const recipients = numbers(6, 0);
      const campaign = {
        sender: 'ACME',
        message: 'Spring sale starts today',
        audience: { type: 'inline' as const, recipients: [...recipients, 'not-a-number'] },
        chunkSize: 2,
      };
      // The same key twice, at once: one campaign, both operations answered with its summary.
      const [first, second] = await Promise.all([
        caller.call('startCampaign', { key, campaign }),
        caller.call('startCampaign', { key, campaign }),
      ]);
      expect(await chargedTo(recipients)).toHaveLength(6);
      expect(first.result).toMatchObject({ key, cancelled: false, sent: 6 });
      expect(first.result.counts).toMatchObject({ delivered: 6 });
      // The invalid entries are counted, not listed: the summary lives in an unencrypted history.
      expect(first.result.invalid).toEqual({ count: 1 });
      expect(second.result).toEqual(first.result);

      // The caller's history: its own input (in its own encoding) and the summary, nothing under msgflow's key.
      const history = await callerHistory(first.workflowId);
      const completed = history.find((e) => e.nexusOperationCompletedEventAttributes)!;
      expect(encodings(history)).not.toContain(ENCRYPTED_ENCODING);
      expect(encodings([completed])).toEqual(['json/plain']);

      // msgflow's campaign keeps its input encrypted; the run that answered the caller holds no number or text.
      const campaignEvents = await campaignHistory(key);
      const campaignStart = campaignEvents[0]!.workflowExecutionStartedEventAttributes!;
      expect(encodings([campaignStart.input!])).toEqual([ENCRYPTED_ENCODING]);
      const started = history.find((e) => e.nexusOperationStartedEventAttributes)!;
      // The caller's started event links to the run backing the operation (and to the campaign, when this
      // operation started it).
      const linked = started.links!.map((l) => l.workflowEvent?.workflowId ?? '');
      const followId = linked.find((id) => id.startsWith(nexusCampaignWorkflowId(key, '')))!;
      expect(followId).toBeDefined();
      const followEvents = (await stack.temporal.workflow.getHandle(followId).fetchHistory()).events!;
      const follow = payloadTexts(followEvents).join('\n');
      expect(follow).toContain(key);
      expect(follow).toContain('"sent":6');
      for (const secret of [...recipients, 'not-a-number', campaign.message]) expect(follow).not.toContain(secret);

      // Linked in the UI: the campaign's start points at the caller's workflow, and the caller's at the run.
      const callerLinks = (campaignEvents[0]!.links ?? []).map((l) => l.workflowEvent);
      expect(callerLinks).toContainEqual(expect.objectContaining({ namespace: caller.namespace }));
      expect([first.workflowId, second.workflowId]).toContain(callerLinks[0]?.workflowId);

      // campaignStatus reads it, sync.
      const { result: status } = await caller.call('campaignStatus', { key });
      expect(status).toMatchObject({ phase: 'completed', sent: 6, failure: null });
    });

    it(
      'cancelling the caller cancels the campaign: no chunk starts after its cancel',
      { timeout: 120_000 },
      async () => {
        const key = `nexus-${randomUUID()}`;
        const recipients = numbers(40, 100);
        const handle = await caller.start('startCampaign', {
          key,
          campaign: { sender: 'ACME', message: 'cancel me', audience: { type: 'inline', recipients }, chunkSize: 2 },
        });
        const run = stack.msgflow.campaign(key);
        await waitFor(async () => (await run.progress().catch(() => ({ sent: 0 }))).sent >= 4, 'a few chunks');
        await handle.cancel();

        const failure = await handle.result().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(WorkflowFailedError);
        expect(causes(failure).some((e) => e instanceof CancelledFailure)).toBe(true);
        expect(encodings(await callerHistory(handle.workflowId))).not.toContain(ENCRYPTED_ENCODING);

        const result = await run.result();
        expect(result.cancelled).toBe(true);
        expect(result.sent).toBeLessThan(recipients.length);
        // Charged once for each message the campaign reports, and for no other of its recipients.
        expect(await chargedTo(recipients)).toHaveLength(result.sent);
        const events = await campaignHistory(key);
        const cancelledAt = events.findIndex(
          (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'cancel',
        );
        expect(cancelledAt).toBeGreaterThan(0);
        const isChunkSend = (e: HistoryEvent) =>
          e.activityTaskScheduledEventAttributes?.activityType?.name === 'sendCampaignChunk';
        expect(events.slice(cancelledAt).filter(isChunkSend)).toEqual([]);
        // The ledger's view: the chunk requests charged (one idempotency key each) are among those started before the
        // cancel was recorded.
        const chunksCharged = new Set((await chargedTo(recipients)).map((c) => c.idempotency_key));
        expect(chunksCharged.has(null)).toBe(false);
        expect(chunksCharged.size).toBeLessThanOrEqual(events.slice(0, cancelledAt).filter(isChunkSend).length);
      },
    );

    it('refuses bad campaign input naming the field, and says when no campaign has a key', async () => {
      const bad = await caller
        .call('startCampaign', {
          key: 'bad-sender',
          campaign: { sender: '', message: 'x', audience: { type: 'inline', recipients: ['2348012345678'] } },
        })
        .catch((error: unknown) => error);
      const refusal = causes(bad).find((e) => e instanceof HandlerError && e.type === 'BAD_REQUEST');
      expect(refusal?.message).toContain('campaign.sender');

      const missing = await caller.call('campaignStatus', { key: `none-${randomUUID()}` }).catch((e: unknown) => e);
      expect(causes(missing).find((e) => e instanceof HandlerError)).toMatchObject({ type: 'NOT_FOUND' });
      const badKey = await caller.call('campaignStatus', { key: 'has spaces' }).catch((e: unknown) => e);
      const badKeyRefusal = causes(badKey).find((e) => e instanceof HandlerError && e.type === 'BAD_REQUEST');
      expect(badKeyRefusal?.message).toContain('Invalid campaign key');
    });
  });

  it('places a voice call and answers its final state; a bad number is refused naming the field', async () => {
    const { workflowId, result } = await caller.call('placeVoiceCall', {
      recipient: VOICE_MAGIC_NUMBERS.completed,
      message: 'Your delivery arrives today',
      pollInitialMs: 20,
    });
    expect(result).toMatchObject({ status: 'completed', final: true });
    expect(encodings(await callerHistory(workflowId))).not.toContain(ENCRYPTED_ENCODING);

    const bad = await caller
      .call('placeVoiceCall', { recipient: 'not-a-number', message: 'hello' })
      .catch((error: unknown) => error);
    const refusal = causes(bad).find((e) => e instanceof HandlerError && e.type === 'BAD_REQUEST');
    expect(refusal?.message).toContain('Invalid voice call: recipient');
  });
});
