/** voiceCall end to end: a real call in the sandbox followed by polling to its final state, or to the deadline. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICE_MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';
import { startTestStack } from '../support/stack.js';
import { VOICE_CALL_NOT_FINAL } from '../../src/definitions/voice.js';

describe('voiceCall', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('follows each call to its final state', async () => {
    const outcomes = ['completed', 'busy', 'no_answer', 'failed'] as const;
    const results = await Promise.all(
      outcomes.map(async (outcome) => {
        const started = await stack.msgflow.startVoiceCall({
          recipient: VOICE_MAGIC_NUMBERS[outcome],
          message: 'Your delivery arrives today',
          pollInitialMs: 20,
        });
        return started.result();
      }),
    );
    expect(results.map((r) => [r.status, r.final])).toEqual(outcomes.map((o) => [o, true]));
    // Each call's final state reached the message store, asked of the provider, with the number it called.
    for (const [i, outcome] of outcomes.entries()) {
      const stored = await stack.store.message(results[i]!.callId);
      expect(stored?.final, outcome).toMatchObject({ status: outcome, source: 'provider' });
      expect(stored?.number).toBe(`+${VOICE_MAGIC_NUMBERS[outcome]}`);
    }
    const completed = results[0]!;
    expect(completed.durationSeconds).toBeGreaterThan(0);
    // The workflow's figures are the provider's.
    const call = await stack.messaging.voice.get(completed.callId);
    expect(call).toMatchObject({
      status: 'completed',
      cost: completed.cost,
      duration_seconds: completed.durationSeconds,
    });
  });

  it('calls once per key, however often it is started', async () => {
    const input = { recipient: VOICE_MAGIC_NUMBERS.completed, message: 'Once only', pollInitialMs: 20 };
    const first = await stack.msgflow.startVoiceCall(input, { key: 'reminder-7' });
    const second = await stack.msgflow.startVoiceCall(input, { key: 'reminder-7' });
    expect(second.workflowId).toBe(first.workflowId);
    const [a, b] = await Promise.all([first.result(), second.result()]);
    expect(b.callId).toBe(a.callId);
    const charges = (await stack.admin.ledger(stack.accountId!)).filter(
      (e) => e.kind === 'voice' && e.reference === a.callId,
    );
    expect(charges).toHaveLength(1);
  });

  it('refuses invalid input before anything is started', async () => {
    await expect(stack.msgflow.startVoiceCall({ recipient: '12', message: 'x' })).rejects.toThrow(
      InvalidWorkflowInputError,
    );
    await expect(
      stack.msgflow.startVoiceCall({ recipient: VOICE_MAGIC_NUMBERS.completed, message: '' }),
    ).rejects.toThrow(/message/);
    await expect(
      stack.msgflow.startVoiceCall({ recipient: VOICE_MAGIC_NUMBERS.completed, message: 'x', deadlineMs: 0 }),
    ).rejects.toThrow(/deadlineMs/);
  });
});

describe('voiceCall past its deadline', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    // Each step of a call takes a minute here: no call can finish within the test's deadline.
    stack = await startTestStack({ sandbox: { carrier: { voiceStepMs: 60_000 } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('reports the last state it saw, not final, after polling until the deadline', async () => {
    const started = await stack.msgflow.startVoiceCall({
      recipient: VOICE_MAGIC_NUMBERS.completed,
      message: 'Slow call',
      deadlineMs: 1500,
      pollInitialMs: 100,
      pollMaxMs: 200,
    });
    const result = await started.result();
    expect(result.final).toBe(false);
    expect(['queued', 'ringing', 'in_progress']).toContain(result.status);
    expect(result.status).toBe((await stack.messaging.voice.get(result.callId)).status);
    // Not final: nothing for the store to hold as the call's final state.
    expect(await stack.store.message(result.callId)).toBeNull();

    // It did poll, and the deadline ended the polling: the poll activity closed (failed, or timed out while
    // waiting for its next attempt) with a "not final yet" answer from the provider as the last failure.
    // Its attempt count is not asserted: the server writes the started event only when an attempt closes.
    const events = (await stack.temporal.workflow.getHandle(started.workflowId).fetchHistory()).events ?? [];
    const poll = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'awaitFinalVoiceCall',
    );
    const closed = events.find((e) => {
      const attributes = e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
      return String(attributes?.scheduledEventId) === String(poll?.eventId);
    });
    const failure =
      closed?.activityTaskFailedEventAttributes?.failure ?? closed?.activityTaskTimedOutEventAttributes?.failure?.cause;
    expect(failure?.applicationFailureInfo?.type).toBe(VOICE_CALL_NOT_FINAL);
  });
});
