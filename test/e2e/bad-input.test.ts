/**
 * Bad input on every path, end to end (real Temporal dev server, real sandbox over HTTP, real worker):
 * workflows started by type name with raw JSON fail at once, naming the field, sending and charging nothing;
 * a key is once while Temporal keeps its run; a number given twice is sent once.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { KeyReusedError } from '../../src/starter/start-once.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { activityCalls } from '../support/history.js';
import { startTestStack } from '../support/stack.js';

const many = (n: number) => Array.from({ length: n }, (_, i) => `23480123${String(i).padStart(5, '0')}`);
const sms = { recipients: [MAGIC_NUMBERS.delivered], sender: 'ACME', message: 'Hello' };

describe('bad input', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** What the provider has seen: the balance and every send request (one provider campaign each). */
  async function ledger() {
    const { balance } = await stack.messaging.balance.get();
    const sends = (await stack.messaging.campaigns.list().toArray()).length;
    return { balance, sends };
  }

  /** Starts `type` by name with raw JSON, as another language would, and returns how its run failed. */
  async function failureOf(type: string, input: unknown, workflowId = `bad:${randomUUID()}`) {
    const handle = await stack.temporal.workflow.start(type, { taskQueue: stack.taskQueue, workflowId, args: [input] });
    const error: unknown = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const history = await handle.fetchHistory();
    return { cause: (error as WorkflowFailedError).cause, events: history.events ?? [] };
  }

  async function expectRefused(type: string, input: unknown, message: string | RegExp) {
    const { cause, events } = await failureOf(type, input);
    expect(cause).toBeInstanceOf(ApplicationFailure);
    const failure = cause as ApplicationFailure;
    expect(failure.type).toBe('InvalidInput');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(message);
    // Refused before anything else: no activity, and no workflow task failed (and retried) on the way.
    expect(activityCalls(events)).toEqual([]);
    expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
  }

  it('refuses bad sendSms input by type name, naming the field, sending and charging nothing', async () => {
    const before = await ledger();
    await expectRefused('sendSms', { ...sms, recipients: many(60) }, 'recipients: at most 50');
    await expectRefused('sendSms', { ...sms, recipients: ['not a number'] }, /^recipients\[0\]: not a phone number/);
    await expectRefused('sendSms', 'garbage', 'input: must be an object');
    await expectRefused('sendSms', { recipients: sms.recipients, sender: 'ACME' }, 'message: is required');
    expect(await ledger()).toEqual(before);
  });

  it('refuses bad input to every other workflow type by name', async () => {
    const before = await ledger();
    for (const type of [
      'smsCampaign',
      'otpVerification',
      'voiceCall',
      'followVoiceCall',
      'checkContacts',
      'awaitMessage',
    ])
      await expectRefused(type, 'garbage', 'input: must be an object');
    await expectRefused(
      'smsCampaign',
      { sender: 'ACME', message: 'Hi', audience: { type: 'inline', recipients: many(10_001) } },
      'audience.recipients: at most 10000',
    );
    await expectRefused('otpVerification', { purpose: 'login' }, 'recipient: is required');
    await expectRefused(
      'voiceCall',
      { recipient: MAGIC_NUMBERS.delivered, message: 'hi', repeat: 9 },
      'repeat: at most 3',
    );
    await expectRefused('followVoiceCall', { callId: '' }, 'callId: must not be empty');
    await expectRefused('checkContacts', {}, 'input: give at least one number or email');
    await expectRefused('awaitMessage', { providerMessageId: '' }, 'providerMessageId: must not be empty');
    expect(await ledger()).toEqual(before);
  });

  it('fails a well-shaped number that is not a real one for good, in the activity', async () => {
    const before = await ledger();
    const { cause } = await failureOf('sendSms', { ...sms, recipients: ['1234567'] });
    expect(cause).toBeInstanceOf(ActivityFailure);
    const failure = (cause as ActivityFailure).cause as ApplicationFailure;
    expect(failure.nonRetryable).toBe(true);
    expect(failure.type).toBe('InvalidInput');
    expect(await ledger()).toEqual(before);
  });

  it('answers a completed key with its run, refuses it with another input, and sends once', async () => {
    const key = `once-${randomUUID()}`;
    const before = await ledger();
    const first = await stack.msgflow.sendSms(sms, { key });
    const result = await first.result();
    const { runId } = await stack.temporal.workflow.getHandle(first.workflowId).describe();

    const again = await stack.msgflow.sendSms(sms, { key });
    expect(again.workflowId).toBe(first.workflowId);
    expect(await again.result()).toEqual(result);
    expect((await stack.temporal.workflow.getHandle(first.workflowId).describe()).runId).toBe(runId);

    const other = stack.msgflow.sendSms({ ...sms, message: 'Another message' }, { key });
    await expect(other).rejects.toThrow(KeyReusedError);
    await expect(other).rejects.toThrow(key);

    const after = await ledger();
    expect(after.sends - before.sends).toBe(1);
    expect(before.balance - after.balance).toBe(result.cost);
  });

  it('may start a failed key again', async () => {
    const key = `retry-${randomUUID()}`;
    await failureOf('sendSms', { ...sms, recipients: [] }, `sms:${key}`);
    const started = await stack.msgflow.sendSms(sms, { key });
    expect((await started.result()).messages.map((m) => m.status)).toEqual(['delivered']);
  });

  it('sends a number given twice once, and reports it', async () => {
    const before = await ledger();
    const started = await stack.msgflow.sendSms({
      ...sms,
      recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered, MAGIC_NUMBERS.delivered],
    });
    const result = await started.result();
    expect(result.messages.map((m) => m.mobile_number)).toEqual([
      `+${MAGIC_NUMBERS.delivered}`,
      `+${MAGIC_NUMBERS.undelivered}`,
    ]);
    expect(result.duplicates).toEqual([`+${MAGIC_NUMBERS.delivered}`]);
    const after = await ledger();
    expect(before.balance - after.balance).toBe(result.cost);
    expect((await stack.messaging.campaigns.get(result.campaignId!)).recipients).toBe(2);
  });

  it('the CLI answers a completed key again, refuses it with another message (exit 2), and sends a repeated number once', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'msgflow-bad-input-'));
    try {
      const key = `cli-${randomUUID()}`;
      const to = `${MAGIC_NUMBERS.delivered},+${MAGIC_NUMBERS.delivered}`;
      const send = (message: string) =>
        runMsgflow(['sms', 'send', '--to', to, '--sender', 'ACME', '--message', message, '--key', key, '--wait'], {
          cwd,
          env: cliEnvFor(stack),
        });
      const before = await ledger();
      const first = await send('Hello');
      expect(first.code).toBe(0);
      expect(first.stdout).toContain(`+${MAGIC_NUMBERS.delivered}  given more than once: sent and charged once`);
      expect((await send('Hello')).stdout).toBe(first.stdout);
      const other = await send('Another message');
      expect(other.code).toBe(2);
      expect(other.stderr).toContain(key);
      expect((await ledger()).sends - before.sends).toBe(1);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
