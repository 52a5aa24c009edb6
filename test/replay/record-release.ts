/**
 * A release's histories (test/replay/histories/<version>/): every workflow type run by a versioned worker of the
 * released code and taken *at its long wait*, where a deploy finds it — a campaign held to its recipients'
 * local hours, paused, after continue-as-new, started by a schedule; an OTP awaiting its verification and one
 * whose fallback call is out; a single send and a message wait awaiting a status; a call ringing. Each is
 * fetched while it waits (a still-running history replays up to its last event); a contact check, which never
 * waits long on anything but the provider, is terminated mid-run after continuing as new.
 *
 * `npm run record:histories -- --release <version>`; a release's folder is written once and never re-recorded.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CampaignProgress } from '../../src/api/campaign-io.js';
import { contactsProgressQuery } from '../../src/definitions/contacts.js';
import { followCallWorkflowId } from '../../src/definitions/workflow-ids.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import type { HistoryJson } from './history-file.js';

/** What the recorder hands the fixtures. */
export interface ReleaseRecording {
  stack: RunningStack;
  /**
   * Saves `<name>.json` once the run's history is at rest (two looks alike, not in a workflow task) and `ready`
   * says it is at the wait the fixture is about.
   */
  saveAtWait(
    name: string,
    workflowId: string,
    ready: (history: HistoryJson) => boolean | Promise<boolean>,
    runId?: string,
  ): Promise<void>;
  /** Saves the history as it is (a run that ended, or was terminated). */
  save(name: string, workflowId: string, runId?: string): Promise<void>;
}

/** Long enough that no recipient's outcome is settled by the provider while the recording runs. */
const SIX_HOURS_MS = 6 * 60 * 60 * 1000;

const numbers = (count: number, from: number) =>
  Array.from({ length: count }, (_, i) => `2348012${String(from + i).padStart(6, '0')}`);

const has = (history: HistoryJson, eventType: string) =>
  history.events.some((e) => e.eventType === `EVENT_TYPE_${eventType}`);

/** Polls `check` every 100 ms for up to two minutes. */
async function until<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  for (let tries = 0; tries < 1200; tries++) {
    const found = await check();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

export async function recordReleaseHistories(recording: ReleaseRecording): Promise<void> {
  await campaigns(recording);
  await otpSessions(recording);
  await singleSendsAndCalls(recording);
  await contactCheck(recording);
}

async function campaigns({ stack, saveAtWait, save }: ReleaseRecording): Promise<void> {
  const progressOf = (workflowId: string) => () => stack.msgflow.campaign(workflowId).progress();
  const at = (progress: () => Promise<CampaignProgress>, wanted: (p: CampaignProgress) => boolean) => async () =>
    wanted(await progress());

  // Held to its recipients' local hours: Lagos's window is open now (sent, delivered), Tokyo's (8 hours ahead)
  // opens tomorrow.
  const dir = mkdtempSync(join(tmpdir(), 'record-release-'));
  try {
    const path = join(dir, 'reminders.csv');
    writeFileSync(
      path,
      [
        'name,phone,timezone',
        `Ada,${numbers(1, 100)[0]},Africa/Lagos`,
        `Bola,${numbers(1, 101)[0]},Africa/Lagos`,
        `Kenji,${numbers(1, 102)[0]},Asia/Tokyo`,
        '',
      ].join('\n'),
    );
    const held = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'Hi {name}, see you tomorrow',
      audience: { type: 'file', path },
      sendWindow: { ...windowAroundNow('Africa/Lagos'), timeZone: 'recipient' },
      waitWindowMs: SIX_HOURS_MS,
    });
    await saveAtWait(
      'sms-campaign-held-to-local-hours',
      held.workflowId,
      at(progressOf(held.workflowId), (p) => p.phase === 'outside-window' && p.sent === 2 && p.queued === 0),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // A team's campaign, paused by an operator after a few chunks, their outcomes in.
  const paused = await stack.msgflow.startCampaign({
    sender: 'ACME',
    message: 'release fixture',
    audience: { type: 'inline', recipients: numbers(30, 200) },
    chunkSize: 1,
    chunksInFlight: 1,
    waitWindowMs: SIX_HOURS_MS,
    team: 'clinic',
  });
  await until('three chunks sent', async () => (await paused.progress()).sent >= 3);
  await paused.pause('release fixture: paused mid-campaign');
  await saveAtWait(
    'sms-campaign-paused',
    paused.workflowId,
    at(progressOf(paused.workflowId), (p) => p.phase === 'paused' && p.queued === 0),
  );

  // Continued as new on the way, then draining: one message never reaches a final state.
  const continued = await stack.msgflow.startCampaign({
    sender: 'ACME',
    message: 'release fixture',
    audience: { type: 'inline', recipients: [...numbers(119, 300), MAGIC_NUMBERS.neverFinal] },
    chunkSize: 1,
    maxEventsPerRun: 200,
    waitWindowMs: SIX_HOURS_MS,
  });
  await saveAtWait(
    'sms-campaign-after-continue-as-new',
    continued.workflowId,
    async (history) =>
      has(history, 'TIMER_STARTED') &&
      (await at(progressOf(continued.workflowId), (p) => p.runs >= 2 && p.phase === 'draining' && p.queued === 1)()),
  );
  const { raw } = await stack.temporal.workflow.getHandle(continued.workflowId).describe();
  const firstRunId = raw.workflowExecutionInfo?.firstRunId;
  if (!firstRunId) throw new Error('the server did not name the first run');
  await save('sms-campaign-before-continue-as-new', continued.workflowId, firstRunId);

  // A run started by a schedule, awaiting its last outcome.
  const schedules = stack.msgflow.campaignSchedules;
  const scheduleId = `release-fixture-${Date.now()}`;
  await schedules.create({
    id: scheduleId,
    timing: { cron: ['0 9 1 1 *'], timeZone: 'Africa/Lagos' },
    campaign: {
      sender: 'ACME',
      message: 'Your weekly statement is ready',
      audience: { type: 'inline', recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.neverFinal] },
      waitWindowMs: SIX_HOURS_MS,
    },
  });
  try {
    await schedules.trigger(scheduleId);
    const [run] = await until('the scheduled run', async () => {
      const runs = (await schedules.describe(scheduleId)).recentRuns;
      return runs.length > 0 && runs;
    });
    await saveAtWait(
      'sms-campaign-scheduled',
      run!.workflowId,
      at(progressOf(run!.workflowId), (p) => p.phase === 'draining' && p.sent === 2 && p.queued === 1),
    );
  } finally {
    await schedules.delete(scheduleId);
  }
}

async function otpSessions({ stack, saveAtWait }: ReleaseRecording): Promise<void> {
  const attemptsOf = async (purpose: string, recipient: string) =>
    (await stack.msgflow.otpState({ purpose, recipient }))?.channelAttempts ?? [];

  // The text delivered, the session awaiting its code.
  const delivered = numbers(1, 400)[0]!;
  const awaiting = await stack.msgflow.sendOtp({ purpose: 'login', recipient: delivered, ttlSeconds: 600 });
  await saveAtWait(
    'otp-verification-awaiting-verify',
    awaiting.workflowId,
    async () => (await attemptsOf('login', delivered))[0]?.outcome === 'delivered',
  );

  // The text undelivered, the fallback call out (ringing for minutes) and followed by its child.
  const fallback = await stack.msgflow.sendOtp({
    purpose: 'signup',
    recipient: MAGIC_NUMBERS.undelivered,
    channels: ['sms', 'voice'],
    ttlSeconds: 600,
  });
  const callOut = async () => {
    const call = (await attemptsOf('signup', MAGIC_NUMBERS.undelivered))[1];
    return call?.outcome === 'placed' && call.id ? call.id : undefined;
  };
  await saveAtWait('otp-verification-voice-fallback-out', fallback.workflowId, async (history) =>
    Boolean((await callOut()) && has(history, 'START_CHILD_WORKFLOW_EXECUTION_INITIATED')),
  );
  const callId = await until('the fallback call', callOut);
  await saveAtWait('follow-voice-call-ringing', followCallWorkflowId(callId), (history) =>
    has(history, 'ACTIVITY_TASK_SCHEDULED'),
  );
}

async function singleSendsAndCalls({ stack, saveAtWait }: ReleaseRecording): Promise<void> {
  // Sent, awaiting a final state that does not come (the wait window's timer runs).
  const send = await stack.msgflow.sendSms({
    recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.neverFinal],
    sender: 'ACME',
    message: 'release fixture',
    waitWindowMs: SIX_HOURS_MS,
  });
  await saveAtWait(
    'send-sms-awaiting-status',
    send.workflowId,
    (history) => has(history, 'TIMER_STARTED') && has(history, 'WORKFLOW_EXECUTION_SIGNALED'),
  );

  // A wait for a message the provider has not reported on.
  const waiter = await stack.msgflow.awaitMessage('release-fixture-unreported', { waitWindowMs: SIX_HOURS_MS });
  await saveAtWait('await-message-awaiting-status', waiter.workflowId, (history) => has(history, 'TIMER_STARTED'));

  // A call ringing, polled until it ends.
  const call = await stack.msgflow.startVoiceCall({
    recipient: MAGIC_NUMBERS.delivered,
    message: 'Your table is ready',
  });
  await saveAtWait(
    'voice-call-ringing',
    call.workflowId,
    (history) => history.events.filter((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED').length >= 2,
  );
}

async function contactCheck({ stack, save }: ReleaseRecording): Promise<void> {
  // Many lookups at the provider's rate, a few per run: terminated in its third run, lookups in flight.
  const check = await stack.msgflow.checkContacts({ numbers: numbers(400, 500), checksPerRun: 40, concurrency: 2 });
  const handle = stack.temporal.workflow.getHandle(check.workflowId);
  await until('the third run of the contact check', async () => {
    const { checked } = await handle.query(contactsProgressQuery);
    return checked >= 90;
  });
  await handle.terminate('release fixture: a contact check mid-run after continue-as-new');
  await save('check-contacts-after-continue-as-new', check.workflowId);
}

/** A window from an hour before to two hours after the local time now in `timeZone` (it may span midnight). */
function windowAroundNow(timeZone: string): { start: string; end: string } {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit' })
    .formatToParts(new Date())
    .filter((p) => p.type === 'hour' || p.type === 'minute')
    .map((p) => Number(p.value));
  const minutes = parts[0]! * 60 + parts[1]!;
  const clock = (m: number) => {
    const wrapped = (m + 24 * 60) % (24 * 60);
    return `${String(Math.floor(wrapped / 60)).padStart(2, '0')}:${String(wrapped % 60).padStart(2, '0')}:00`;
  };
  return { start: clock(minutes - 60), end: clock(minutes + 120) };
}
