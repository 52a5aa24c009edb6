/**
 * An OTP session's fallback call, followed to its final state: the session starts `followVoiceCall` as an
 * abandoned child (the poll records the final state in the message store, source `provider`) and, while the
 * session is still pending, puts the final state on its attempt, so `otp status` and the result show it. The
 * session never waits for the call to end: once verified, expired or locked it closes, and the child goes on.
 * Sessions started before OTP_CALL_FOLLOWED leave their call `placed`.
 */
import { condition, ParentClosePolicy, patched, startChild } from '@temporalio/workflow';
import type { FollowVoiceCallResult, OtpChannelAttempt } from '../src/api/otp-io.js';
import { SA } from '../src/definitions/search-attributes.js';
import { followCallWorkflowId } from '../src/definitions/workflow-ids.js';
import { callSettled, type OtpSession } from './otp-state.js';
import { followVoiceCall } from './voice-follow.js';

/** The patch that made sessions follow their call to its final state. */
export const OTP_CALL_FOLLOWED = 'otp-call-followed';

/** The session's call, once final while the session is pending (its attempt updated); null otherwise. */
export async function followPlacedCall(state: OtpSession): Promise<OtpChannelAttempt | null> {
  const call = state.attempts.find((a) => a.channel === 'voice' && a.outcome === 'placed' && a.id !== null);
  if (!call?.id || !patched(OTP_CALL_FOLLOWED)) return null;
  const follower = await startChild(followVoiceCall, {
    workflowId: followCallWorkflowId(call.id),
    args: [{ callId: call.id }],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    typedSearchAttributes: [{ key: SA.kind, value: 'voice' }],
  });
  let followed: FollowVoiceCallResult | null | undefined;
  follower.result().then(
    (result) => (followed = result),
    () => (followed = null),
  );
  await condition(() => followed !== undefined || state.status !== 'pending');
  return followed?.final && followed.status ? callSettled(state, call.id, followed.status) : null;
}
