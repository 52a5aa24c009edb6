/**
 * Follows the call an OTP session placed (its voice fallback) to the call's final state, as `voiceCall`
 * follows its own: polling GET /voice/{id} on the provider queue, within OTP_CALL_FOLLOW_MS. The poll records
 * the final state in the message store (source `provider`); the session's attempt takes it, so `otp status`
 * and the session's result show it. Sessions started before OTP_CALL_FINAL leave their call `placed`.
 */
import { isCancellation, patched, proxyActivities } from '@temporalio/workflow';
import type { createVoiceActivities } from '../activities/voice.js';
import type { OtpChannelAttempt } from '../src/api/otp-io.js';
import { VOICE_CALL_DEFAULTS } from '../src/api/constants.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { callSettled, type OtpSession } from './otp-state.js';
import { pollingRetry } from './retry-policies.js';

/** The patch that made sessions follow their call to its final state. */
export const OTP_CALL_FINAL = 'otp-call-final';
/** A call reading a code out ends within a minute or two; one still going after this stays `placed`. */
const OTP_CALL_FOLLOW_MS = 5 * 60 * 1000;

/** The session's call, once final (its attempt updated); null when there is none to follow or it never ended. */
export async function followPlacedCall(state: OtpSession, taskQueue: string): Promise<OtpChannelAttempt | null> {
  const call = state.attempts.find((a) => a.channel === 'voice' && a.outcome === 'placed' && a.id !== null);
  if (!call?.id || !patched(OTP_CALL_FINAL)) return null;
  const poller = proxyActivities<ReturnType<typeof createVoiceActivities>>({
    taskQueue: providerTaskQueue(taskQueue),
    startToCloseTimeout: '30 seconds',
    // The retry policy is the polling schedule; the follow window bounds all of it.
    scheduleToCloseTimeout: OTP_CALL_FOLLOW_MS,
    retry: pollingRetry(VOICE_CALL_DEFAULTS.pollInitialMs, VOICE_CALL_DEFAULTS.pollMaxMs),
  });
  try {
    const final = await poller.awaitFinalVoiceCall(call.id);
    return callSettled(state, call.id, final.status);
  } catch (error) {
    if (isCancellation(error)) throw error;
    return null; // not final within the window, or the provider could not say: the call stays `placed`
  }
}
