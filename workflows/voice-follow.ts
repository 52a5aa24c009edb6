/**
 * `followVoiceCall`: follows a call placed elsewhere to its final state, polling GET /voice/{id} as
 * `voiceCall` does (the poll records the final state in the message store). An OTP session starts it as an
 * abandoned child for its fallback call, so the call is followed to its end even after the session closed,
 * and a new session for the same pair never waits for it.
 */
import {
  ActivityFailure,
  isCancellation,
  proxyActivities,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { createVoiceActivities, VoiceCallSnapshot } from '../activities/voice.js';
import { isFinalVoiceStatus, VOICE_CALL_DEFAULTS } from '../src/api/constants.js';
import type { FollowVoiceCallInput, FollowVoiceCallResult } from '../src/api/otp-io.js';
import { SA } from '../src/definitions/search-attributes.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { FOLLOW_VOICE_CALL_INPUT } from '../src/definitions/workflow-inputs.js';
import { checkFirstInput } from './input-check.js';
import { LAST_LOOK_RETRY, pollingRetry } from './retry-policies.js';
import { PROVIDER_ACTIVITY_OPTIONS } from './options.js';

/** A call reading a code out ends within a minute or two; past this, its last state is reported. */
export const FOLLOW_DEADLINE_MS = 5 * 60 * 1000;

type VoiceActivities = ReturnType<typeof createVoiceActivities>;

export async function followVoiceCall(input: FollowVoiceCallInput): Promise<FollowVoiceCallResult> {
  checkFirstInput(FOLLOW_VOICE_CALL_INPUT, input);
  const { callId, deadlineMs = FOLLOW_DEADLINE_MS } = input;
  const queue = providerTaskQueue(workflowInfo().taskQueue);
  const poller = proxyActivities<VoiceActivities>({
    taskQueue: queue,
    startToCloseTimeout: '30 seconds',
    // The retry policy is the polling schedule; the deadline bounds all of it.
    scheduleToCloseTimeout: deadlineMs,
    retry: pollingRetry(VOICE_CALL_DEFAULTS.pollInitialMs, VOICE_CALL_DEFAULTS.pollMaxMs),
  });
  try {
    const call = await poller.awaitFinalVoiceCall(callId);
    upsertSearchAttributes([{ key: SA.finalStatus, value: call.status }]);
    return { callId, status: call.status, final: true };
  } catch (error) {
    if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
  }
  // Past the deadline: one more look (it records a final state it finds), then the answer as it stands.
  const lastLook = proxyActivities<VoiceActivities>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: queue,
    retry: LAST_LOOK_RETRY,
  });
  const call: VoiceCallSnapshot | null = await lastLook.getVoiceCall(callId).catch(() => null);
  if (!call) return { callId, status: null, final: false };
  const final = isFinalVoiceStatus(call.status);
  if (final) upsertSearchAttributes([{ key: SA.finalStatus, value: call.status }]);
  return { callId, status: call.status, final };
}
