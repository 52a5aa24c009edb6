/**
 * How a call is followed to its final state, for `voiceCall` and `followVoiceCall`: one activity whose retry
 * policy is the polling schedule, bounded by a deadline, and one last look once the deadline has passed.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { createVoiceActivities } from '../activities/voice.js';
import { PROVIDER_ACTIVITY_OPTIONS } from './options.js';
import { LAST_LOOK_RETRY, pollingRetry } from './retry-policies.js';

type VoiceActivities = ReturnType<typeof createVoiceActivities>;

/** `awaitFinalVoiceCall` polls from `pollInitialMs` up to every `pollMaxMs` until the call ends or `withinMs` passes. */
export function callPoller(queue: string, withinMs: number, pollInitialMs: number, pollMaxMs: number) {
  return proxyActivities<VoiceActivities>({
    taskQueue: queue,
    startToCloseTimeout: '30 seconds',
    // The retry policy is the polling schedule; the deadline bounds all of it.
    scheduleToCloseTimeout: withinMs,
    retry: pollingRetry(pollInitialMs, pollMaxMs),
  });
}

/** One more `getVoiceCall` past the deadline, so the answer is as fresh as it can be. */
export function lastLook(queue: string) {
  return proxyActivities<VoiceActivities>({ ...PROVIDER_ACTIVITY_OPTIONS, taskQueue: queue, retry: LAST_LOOK_RETRY });
}
