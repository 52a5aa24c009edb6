/** Names shared by the voiceCall workflow and its activities. Pure: safe inside the workflow sandbox. */

/** Failure type of a poll that found the call still going; retried on the workflow's backoff schedule. */
export const VOICE_CALL_NOT_FINAL = 'VoiceCallNotFinal';
