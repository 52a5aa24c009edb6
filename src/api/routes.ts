/**
 * Every operation of the v1 API, described once. The sandbox mounts its handlers from this table
 * (scope checks, body and query validation, idempotency), the client builds its requests from it, and
 * the OpenAPI document is generated from it.
 */
import type { z } from 'zod';
import { Balance, Pricing } from './account.js';
import { EmailVerification, EmailVerifyRequest, Lookup, LookupRequest } from './checks.js';
import { ListQuery } from './common.js';
import { OtpSendRequest, OtpSendResult, OtpVerifyRequest, OtpVerifyResult } from './otp.js';
import type { Scope } from './scopes.js';
import { CampaignRecord, MessageRecord, SmsSendRequest, SmsSendResult, StatusFilter } from './sms.js';
import { VoiceCall, VoiceSendRequest } from './voice.js';
import { WebhookCreateRequest, WebhookEndpoint, WebhookRegistration, WebhookUpdateRequest } from './webhooks.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface Route {
  method: HttpMethod;
  /** OpenAPI-style path relative to {base_url}, e.g. `/voice/{id}`. */
  path: string;
  scope: Scope;
  summary: string;
  /** Success status. */
  status: 200 | 201 | 202 | 204;
  body?: z.ZodType;
  query?: z.ZodType;
  /** The payload under `data` (or the item of a paginated list). */
  response?: z.ZodType;
  paginated?: boolean;
  /** Accepts an Idempotency-Key header (spec "Idempotency", rule 1). */
  idempotent?: boolean;
  /** Spends from the wallet. */
  charged?: boolean;
  /** Names an existing record in its body (not its path), so an unknown one is a 404 too. */
  bodyNamesRecord?: boolean;
}

const ListWithStatus = ListQuery.extend(StatusFilter.shape);

function route<R extends Route>(r: R): R {
  return r;
}

export const routes = {
  smsSend: route({
    method: 'POST',
    path: '/sms/send',
    scope: 'sms:send',
    status: 202,
    summary: 'Send SMS (queues a campaign)',
    body: SmsSendRequest,
    response: SmsSendResult,
    idempotent: true,
    charged: true,
  }),
  otpSend: route({
    method: 'POST',
    path: '/otp/send',
    scope: 'otp',
    status: 200,
    summary: 'Send a one-time password',
    body: OtpSendRequest,
    response: OtpSendResult,
    idempotent: true,
    charged: true,
    // `otp_id` resends that OTP's pending code: 404 when the account has none by that id.
    bodyNamesRecord: true,
  }),
  otpVerify: route({
    method: 'POST',
    path: '/otp/verify',
    scope: 'otp',
    status: 200,
    summary: 'Verify a one-time password',
    body: OtpVerifyRequest,
    response: OtpVerifyResult,
    bodyNamesRecord: true,
  }),
  voiceSend: route({
    method: 'POST',
    path: '/voice/send',
    scope: 'voice',
    status: 200,
    summary: 'Place a text-to-speech voice call',
    body: VoiceSendRequest,
    response: VoiceCall,
    idempotent: true,
    charged: true,
  }),
  voiceGet: route({
    method: 'GET',
    path: '/voice/{id}',
    scope: 'voice',
    status: 200,
    summary: 'Fetch a voice call',
    response: VoiceCall,
  }),
  lookupCreate: route({
    method: 'POST',
    path: '/lookup',
    scope: 'lookup',
    status: 200,
    summary: 'Look up a number',
    body: LookupRequest,
    response: Lookup,
    charged: true,
  }),
  lookupList: route({
    method: 'GET',
    path: '/lookups',
    scope: 'lookup',
    status: 200,
    summary: 'List lookups',
    query: ListQuery,
    response: Lookup,
    paginated: true,
  }),
  lookupGet: route({
    method: 'GET',
    path: '/lookup/{id}',
    scope: 'lookup',
    status: 200,
    summary: 'Fetch a lookup',
    response: Lookup,
  }),
  emailVerify: route({
    method: 'POST',
    path: '/email/verify',
    scope: 'email:verify',
    status: 200,
    summary: 'Verify an email address',
    body: EmailVerifyRequest,
    response: EmailVerification,
    charged: true,
  }),
  messageList: route({
    method: 'GET',
    path: '/messages',
    scope: 'reports',
    status: 200,
    summary: 'List messages',
    query: ListWithStatus,
    response: MessageRecord,
    paginated: true,
  }),
  messageGet: route({
    method: 'GET',
    path: '/messages/{id}',
    scope: 'reports',
    status: 200,
    summary: 'Fetch a message',
    response: MessageRecord,
  }),
  campaignList: route({
    method: 'GET',
    path: '/campaigns',
    scope: 'reports',
    status: 200,
    summary: 'List campaigns (status: those with a message in that status)',
    query: ListWithStatus,
    response: CampaignRecord,
    paginated: true,
  }),
  campaignGet: route({
    method: 'GET',
    path: '/campaigns/{id}',
    scope: 'reports',
    status: 200,
    summary: 'Fetch a campaign',
    response: CampaignRecord,
  }),
  balanceGet: route({
    method: 'GET',
    path: '/balance',
    scope: 'balance',
    status: 200,
    summary: 'Wallet balance',
    response: Balance,
  }),
  pricingGet: route({
    method: 'GET',
    path: '/pricing',
    scope: 'balance',
    status: 200,
    summary: 'Prices of charged operations',
    response: Pricing,
  }),
  webhookCreate: route({
    method: 'POST',
    path: '/webhooks',
    scope: 'webhooks',
    status: 201,
    summary: 'Register a webhook endpoint',
    body: WebhookCreateRequest,
    response: WebhookRegistration,
  }),
  webhookList: route({
    method: 'GET',
    path: '/webhooks',
    scope: 'webhooks',
    status: 200,
    summary: 'List webhook endpoints',
    query: ListQuery,
    response: WebhookEndpoint,
    paginated: true,
  }),
  webhookGet: route({
    method: 'GET',
    path: '/webhooks/{id}',
    scope: 'webhooks',
    status: 200,
    summary: 'Fetch a webhook endpoint',
    response: WebhookEndpoint,
  }),
  webhookUpdate: route({
    method: 'PATCH',
    path: '/webhooks/{id}',
    scope: 'webhooks',
    status: 200,
    summary: 'Update a webhook endpoint',
    body: WebhookUpdateRequest,
    response: WebhookEndpoint,
  }),
  webhookDelete: route({
    method: 'DELETE',
    path: '/webhooks/{id}',
    scope: 'webhooks',
    status: 204,
    summary: 'Delete a webhook endpoint',
  }),
} satisfies Record<string, Route>;

export type RouteName = keyof typeof routes;

/** Fills `{name}` path parameters, encoding each value. */
export function buildPath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const RATE_LIMIT_HEADERS = {
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
} as const;
