/**
 * The working histories (test/replay/histories/*.json): each workflow type run to its end with the current
 * code, re-recorded when a workflow changes on purpose. `npm run record:histories [-- <name>...]`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatTimestamp } from '../../src/api/common.js';
import { signWebhook } from '../../src/api/signature.js';
import { followCallWorkflowId } from '../../src/definitions/workflow-ids.js';
import { MAGIC_NUMBERS, VOICE_MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';

export async function recordWorkingHistories(
  stack: RunningStack,
  save: (name: string, workflowId: string) => Promise<void>,
): Promise<void> {
  // sendSms with every final state, reported by webhook events.
  const all = await stack.msgflow.sendSms({
    recipients: [
      MAGIC_NUMBERS.delivered,
      MAGIC_NUMBERS.undelivered,
      MAGIC_NUMBERS.failed,
      MAGIC_NUMBERS.rejected,
      MAGIC_NUMBERS.expired,
    ],
    sender: 'ACME',
    message: 'replay fixture',
  });
  await all.result();
  await save('send-sms-every-final-state', all.workflowId);

  // sendSms whose events are lost: the provider is asked, and a never-final message times out.
  const [endpoint] = await stack.messaging.webhooks.list().toArray();
  await stack.messaging.webhooks.update(endpoint!.id, { url: 'http://127.0.0.1:9/nowhere' });
  const fallback = await stack.msgflow.sendSms({
    recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.neverFinal],
    sender: 'ACME',
    message: 'replay fixture',
    waitWindowMs: 1000,
  });
  await fallback.result();
  await stack.messaging.webhooks.update(endpoint!.id, { url: stack.ingress.webhookUrl });
  await save('send-sms-provider-fallback', fallback.workflowId);

  // An early event, a duplicate and a conflicting one (kept by the message store), then a waiter.
  const id = `replay-${randomUUID()}`;
  for (const status of ['undelivered', 'undelivered', 'delivered'] as const) {
    const body = JSON.stringify({
      event: `message.${status}`,
      mobile_number: `+${MAGIC_NUMBERS.delivered}`,
      provider_message_id: id,
      status,
      timestamp: formatTimestamp(new Date()),
    });
    const headers = signWebhook([stack.webhookSecret], `msg_${randomUUID()}`, Math.floor(Date.now() / 1000), body);
    const response = await fetch(stack.ingress.webhookUrl, { method: 'POST', headers, body });
    if (!response.ok) throw new Error(`ingress answered ${response.status}`);
  }
  const waiter = await stack.msgflow.awaitMessage(id);
  await waiter.result();
  await save('await-message-after-early-events', waiter.workflowId);

  // OTP: a wrong code, then the right one (read from the sandbox inbox), then a reuse.
  const otpRecipient = '2348012340001';
  const otp = await stack.msgflow.sendOtp({ purpose: 'login', recipient: otpRecipient });
  const code = /\d{6}/.exec((await stack.admin.inbox(otpRecipient))[0]?.text ?? '')?.[0];
  if (!code) throw new Error('no OTP code in the inbox');
  await stack.msgflow.verifyOtp({
    purpose: 'login',
    recipient: otpRecipient,
    code: code === '000000' ? '111111' : '000000',
  });
  await stack.msgflow.verifyOtp({ purpose: 'login', recipient: otpRecipient, code });
  await stack.msgflow.verifyOtp({ purpose: 'login', recipient: otpRecipient, code });
  await save('otp-verification-local-calls', otp.workflowId);

  // OTP with a voice fallback: the text is undelivered, the call reads the code out, the code verifies.
  const voiceFallback = await stack.msgflow.sendOtp({
    purpose: 'login',
    recipient: MAGIC_NUMBERS.undelivered,
    channels: ['sms', 'voice'],
    channelTimeoutSeconds: 600,
  });
  let spoken: string | null | undefined;
  for (let tries = 0; !spoken && tries < 100; tries++) {
    spoken = (await stack.admin.inbox(MAGIC_NUMBERS.undelivered)).find((e) => e.kind === 'voice')?.code;
    if (!spoken) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!spoken) throw new Error('no OTP call in the inbox');
  await stack.msgflow.verifyOtp({ purpose: 'login', recipient: MAGIC_NUMBERS.undelivered, code: spoken });
  await stack.temporal.workflow.getHandle(voiceFallback.workflowId).result();
  await save('otp-verification-voice-fallback', voiceFallback.workflowId);

  // OTP whose fallback call is followed to its final state by its child (otp-call-followed): nobody answers.
  const unanswered = VOICE_MAGIC_NUMBERS.no_answer;
  const followed = await stack.msgflow.sendOtp({
    purpose: 'signup',
    recipient: unanswered,
    channels: ['sms', 'voice'],
    channelTimeoutSeconds: 1,
  });
  let outcome: string | undefined;
  for (let tries = 0; outcome !== 'no_answer' && tries < 300; tries++) {
    outcome = (await stack.msgflow.otpState({ purpose: 'signup', recipient: unanswered }))?.channelAttempts?.[1]
      ?.outcome;
    if (outcome !== 'no_answer') await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (outcome !== 'no_answer') throw new Error(`the OTP call was not followed to its end (${outcome})`);
  const read = (await stack.admin.inbox(unanswered)).find((e) => e.kind === 'voice')?.code;
  await stack.msgflow.verifyOtp({ purpose: 'signup', recipient: unanswered, code: read! });
  const session = stack.temporal.workflow.getHandle(followed.workflowId);
  await session.result();
  await save('otp-verification-call-followed', followed.workflowId);
  const followedCall = (await session.result()).channelAttempts?.[1]?.id;
  const follower = followCallWorkflowId(followedCall!);
  await stack.temporal.workflow.getHandle(follower).result();
  await save('follow-voice-call', follower);

  // A voice call followed to its final state, and a contact check.
  const call = await stack.msgflow.startVoiceCall({
    recipient: MAGIC_NUMBERS.delivered,
    message: 'Your table is ready',
  });
  await call.result();
  await save('voice-call', call.workflowId);
  const check = await stack.msgflow.checkContacts({
    numbers: [MAGIC_NUMBERS.delivered, '12345'],
    emails: ['ada@example.com', 'x@nowhere.invalid'],
  });
  await check.result();
  await save('check-contacts', check.workflowId);

  // A small campaign in chunks, with an invalid and a duplicate recipient.
  const campaign = await stack.msgflow.startCampaign({
    sender: 'ACME',
    message: 'replay fixture',
    audience: {
      type: 'inline',
      recipients: [
        MAGIC_NUMBERS.delivered,
        MAGIC_NUMBERS.undelivered,
        MAGIC_NUMBERS.failed,
        MAGIC_NUMBERS.delivered,
        '12',
        MAGIC_NUMBERS.expired,
      ],
    },
    chunkSize: 2,
    waitWindowMs: 3000,
  });
  await campaign.result();
  await save('sms-campaign', campaign.workflowId);

  // A team's campaign: its provider calls carry the team as their fairness key.
  const team = await stack.msgflow.startCampaign({
    sender: 'ACME',
    message: 'replay fixture',
    audience: { type: 'inline', recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered] },
    chunkSize: 1,
    waitWindowMs: 3000,
    team: 'clinic',
  });
  await team.result();
  await save('sms-campaign-team', team.workflowId);

  // Personal texts in each recipient's local hours, from a CSV: two share a text, one zone told by the number.
  const dir = mkdtempSync(join(tmpdir(), 'record-'));
  try {
    const path = join(dir, 'reminders.csv');
    writeFileSync(
      path,
      ['name,phone,timezone', 'Ada,2348012340011,', 'Ada,2348012340012,', 'Kenji,2348012340013,Asia/Tokyo', ''].join(
        '\n',
      ),
    );
    const personal = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'Hi {name}, see you tomorrow',
      audience: { type: 'file', path },
      sendWindow: { start: '00:00:00', end: '23:59:59', timeZone: 'recipient' },
      waitWindowMs: 3000,
    });
    await personal.result();
    await save('sms-campaign-personal-local-hours', personal.workflowId);

    // One text from a file, read a page ahead while the sends wait for room (maxOutstanding of one chunk).
    const numbers = join(dir, 'numbers.txt');
    writeFileSync(numbers, Array.from({ length: 12 }, (_, i) => `23480123401${String(20 + i)}`).join('\n'));
    const paged = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'replay fixture',
      audience: { type: 'file', path: numbers },
      chunkSize: 2,
      maxOutstanding: 2,
      waitWindowMs: 3000,
    });
    await paged.result();
    await save('sms-campaign-file-read-ahead', paged.workflowId);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
