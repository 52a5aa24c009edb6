/** Every v1 operation's handler, keyed by its name in the route table. */
import type { Handlers } from '../http/pipeline.js';
import { balanceGet, pricingGet } from './account.js';
import { emailVerify, lookupCreate, lookupGet, lookupList } from './checks.js';
import { otpSend, otpVerify } from './otp.js';
import { campaignGet, campaignList, messageGet, messageList } from './reports.js';
import { smsSend } from './sms.js';
import { voiceGet, voiceSend } from './voice.js';
import { webhookCreate, webhookDelete, webhookGet, webhookList, webhookUpdate } from './webhooks.js';

export const handlers: Handlers = {
  smsSend,
  otpSend,
  otpVerify,
  voiceSend,
  voiceGet,
  lookupCreate,
  lookupList,
  lookupGet,
  emailVerify,
  messageList,
  messageGet,
  campaignList,
  campaignGet,
  balanceGet,
  pricingGet,
  webhookCreate,
  webhookList,
  webhookGet,
  webhookUpdate,
  webhookDelete,
};
