/**
 * `followVoiceCall`: follows a call placed elsewhere to its final state, polling GET /voice/{id} as
 * `voiceCall` does (the poll records the final state in the message store). An OTP session starts it as an
 * abandoned child for its fallback call, so the call is followed to its end even after the session closed,
 * and a new session for the same pair never waits for it.
 */
import { ActivityFailure, isCancellation, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { VoiceCallSnapshot } from '../activities/voice.js';
import { isFinalVoiceStatus, VOICE_CALL_DEFAULTS } from '../src/api/constants.js';
import type { FollowVoiceCallInput, FollowVoiceCallResult } from '../src/api/otp-io.js';
import { SA } from '../src/definitions/search-attributes.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { checkFirstInput } from './input-check.js';
import { callPoller, lastLook } from './voice-polling.js';

/** A call reading a code out ends within a minute or two; past this, its last state is reported. */
export const FOLLOW_DEADLINE_MS = 5 * 60 * 1000;

export async function followVoiceCall(input: FollowVoiceCallInput): Promise<FollowVoiceCallResult> {
  checkFirstInput('followVoiceCall', input);
  const { callId, deadlineMs = FOLLOW_DEADLINE_MS } = input;
  const queue = providerTaskQueue(workflowInfo().taskQueue);
  const poller = callPoller(queue, deadlineMs, VOICE_CALL_DEFAULTS.pollInitialMs, VOICE_CALL_DEFAULTS.pollMaxMs);
  try {
    const call = await poller.awaitFinalVoiceCall(callId);
    upsertSearchAttributes([{ key: SA.finalStatus, value: call.status }]);
    return { callId, status: call.status, final: true };
  } catch (error) {
    if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
  }
  // Past the deadline: one more look (it records a final state it finds), then the answer as it stands.
  const call: VoiceCallSnapshot | null = await lastLook(queue)
    .getVoiceCall(callId)
    .catch(() => null);
  if (!call) return { callId, status: null, final: false };
  const final = isFinalVoiceStatus(call.status);
  if (final) upsertSearchAttributes([{ key: SA.finalStatus, value: call.status }]);
  return { callId, status: call.status, final };
}
