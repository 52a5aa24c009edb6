/** Every workflow the worker registers. Deterministic code only: nothing imported here does I/O. */
export { awaitMessage } from './await-message.js';
export { sendSms } from './send-sms.js';
export { smsCampaign } from './campaign.js';
export { checkContacts } from './contacts.js';
export { otpVerification } from './otp.js';
export { voiceCall } from './voice.js';
export { followVoiceCall } from './voice-follow.js';
