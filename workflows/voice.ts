/**
 * `voiceCall`: places a text-to-speech call, then follows it to its final state by polling GET /voice/{id}
 * on a backoff schedule (the spec has no voice events), until a deadline. Past the deadline it reports the
 * last state it saw, with `final: false`.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { createVoiceActivities, VoiceCallSnapshot } from '../activities/voice.js';
import { isFinalVoiceStatus, VOICE_CALL_DEFAULTS } from '../src/api/constants.js';
import type { VoiceCallInput, VoiceCallResult } from '../src/api/otp-io.js';
import { SA } from '../src/definitions/search-attributes.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { VOICE_CALL_NOT_FINAL } from '../src/definitions/voice.js';
import { idempotencyKey } from '../src/definitions/workflow-ids.js';
import { PROVIDER_ACTIVITY_OPTIONS } from './options.js';
import { callPoller, lastLook } from './voice-polling.js';
import { checkFirstInput } from './input-check.js';

export async function voiceCall(input: VoiceCallInput): Promise<VoiceCallResult> {
  checkFirstInput('voiceCall', input);
  const {
    deadlineMs = VOICE_CALL_DEFAULTS.deadlineMs,
    pollInitialMs = VOICE_CALL_DEFAULTS.pollInitialMs,
    pollMaxMs = VOICE_CALL_DEFAULTS.pollMaxMs,
    ...request
  } = input;
  const startedAt = Date.now();
  const { workflowId, taskQueue } = workflowInfo();
  const queue = providerTaskQueue(taskQueue);
  const provider = proxyActivities<ReturnType<typeof createVoiceActivities>>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: queue,
  });

  let call = await provider.placeVoiceCall(request, idempotencyKey(workflowId, 'call'));
  if (!isFinalVoiceStatus(call.status)) {
    const poller = callPoller(queue, Math.max(1, deadlineMs - (Date.now() - startedAt)), pollInitialMs, pollMaxMs);
    try {
      call = await poller.awaitFinalVoiceCall(call.id);
    } catch (error) {
      if (!pastDeadline(error)) throw error;
      // The last snapshot if the provider is down.
      call = await lastLook(queue)
        .getVoiceCall(call.id)
        .catch((): VoiceCallSnapshot => call);
    }
  }
  const final = isFinalVoiceStatus(call.status);
  if (final) upsertSearchAttributes([{ key: SA.finalStatus, value: call.status }]);
  return {
    callId: call.id,
    status: call.status,
    final,
    durationSeconds: call.durationSeconds,
    cost: call.cost,
    currency: call.currency,
  };
}

/** The deadline ended the polling: a timeout, or the last "not final yet" when no retry fitted before it. */
function pastDeadline(error: unknown): boolean {
  if (!(error instanceof ActivityFailure)) return false;
  return (
    error.cause instanceof TimeoutFailure ||
    (error.cause instanceof ApplicationFailure && error.cause.type === VOICE_CALL_NOT_FINAL)
  );
}
