/**
 * Thin resource objects, one per area of the API. Each method names its route in the contract's route
 * table and hands the call to the shared pipeline; none of them knows HTTP.
 */
import type { Balance, Pricing } from '../api/account.js';
import type { EmailVerification, EmailVerifyRequest, Lookup, LookupRequest } from '../api/checks.js';
import type { MessageStatus } from '../api/events.js';
import type { OtpSendRequest, OtpSendResult, OtpVerifyRequest, OtpVerifyResult } from '../api/otp.js';
import { type Route, routes } from '../api/routes.js';
import type { CampaignRecord, MessageRecord, SmsSendRequest, SmsSendResult } from '../api/sms.js';
import type { VoiceCall, VoiceSendRequest } from '../api/voice.js';
import type {
  WebhookCreateRequest,
  WebhookEndpoint,
  WebhookRegistration,
  WebhookUpdateRequest,
} from '../api/webhooks.js';
import type { RequestOptions, SendOptions, WithResponse } from './options.js';
import { type Page, PagedList, toPage } from './pagination.js';
import { type Call, definedEntries, type RequestPipeline, validateQuery } from './request.js';
import { withResponse } from './response.js';

export interface ListParams {
  /** Items per page (the provider's default applies when omitted). */
  perPage?: number;
  /** Start from this cursor (a `nextCursor` from an earlier page) instead of the first page. */
  cursor?: string;
}

export interface StatusListParams extends ListParams {
  status?: MessageStatus;
}

/** What `webhooks.delete` resolves to (the provider answers 204 with no body). */
export interface Deleted {
  id: string;
  deleted: true;
}

abstract class Resource {
  constructor(protected readonly pipeline: RequestPipeline) {}

  protected async request<T>(call: Call): Promise<WithResponse<T>> {
    const { payload, meta } = await this.pipeline.call(call);
    return withResponse(payload as T & object, meta);
  }

  /** Validates the query now (so bad input throws before any request) and pages lazily. */
  protected paginate<T>(route: Route, params: StatusListParams, options: RequestOptions = {}): PagedList<T> {
    const { perPage, cursor, ...rest } = params;
    const query = definedEntries({ ...rest, per_page: perPage });
    if (route.query)
      validateQuery(
        route.query,
        { ...query, ...(cursor === undefined ? {} : { cursor }) },
        `query for ${route.method} ${route.path}`,
      );
    return new PagedList<T>(async (pageCursor) => {
      const call: Call = { route, query: { ...query, cursor: pageCursor }, options };
      const { payload, meta } = await this.pipeline.call(call);
      return toPage(payload as { data: T[]; next_cursor: string | null; per_page?: number }, meta, perPage);
    }, cursor);
  }
}

export class SmsResource extends Resource {
  /** Queues a campaign (202). Idempotent: see SendOptions.idempotencyKey. */
  send(body: SmsSendRequest, options?: SendOptions): Promise<WithResponse<SmsSendResult>> {
    return this.request({ route: routes.smsSend, body, options });
  }
}

export class OtpResource extends Resource {
  send(body: OtpSendRequest, options?: SendOptions): Promise<WithResponse<OtpSendResult>> {
    return this.request({ route: routes.otpSend, body, options });
  }

  /** A wrong code is an answer (`status: 'invalid'`), not an error. Never retried after a 5xx: each try counts. */
  verify(body: OtpVerifyRequest, options?: RequestOptions): Promise<WithResponse<OtpVerifyResult>> {
    return this.request({ route: routes.otpVerify, body, options });
  }
}

export class VoiceResource extends Resource {
  send(body: VoiceSendRequest, options?: SendOptions): Promise<WithResponse<VoiceCall>> {
    return this.request({ route: routes.voiceSend, body, options });
  }

  get(id: string, options?: RequestOptions): Promise<WithResponse<VoiceCall>> {
    return this.request({ route: routes.voiceGet, params: { id }, options });
  }
}

export class LookupsResource extends Resource {
  /** Charged and not idempotent: not retried after a 5xx or a network failure. */
  create(body: LookupRequest, options?: RequestOptions): Promise<WithResponse<Lookup>> {
    return this.request({ route: routes.lookupCreate, body, options });
  }

  list(params: ListParams = {}, options?: RequestOptions): PagedList<Lookup> {
    return this.paginate(routes.lookupList, params, options);
  }

  get(id: string, options?: RequestOptions): Promise<WithResponse<Lookup>> {
    return this.request({ route: routes.lookupGet, params: { id }, options });
  }
}

export class EmailResource extends Resource {
  verify(body: EmailVerifyRequest, options?: RequestOptions): Promise<WithResponse<EmailVerification>> {
    return this.request({ route: routes.emailVerify, body, options });
  }
}

export class MessagesResource extends Resource {
  list(params: StatusListParams = {}, options?: RequestOptions): PagedList<MessageRecord> {
    return this.paginate(routes.messageList, params, options);
  }

  /** `id` is the provider_message_id. */
  get(id: string, options?: RequestOptions): Promise<WithResponse<MessageRecord>> {
    return this.request({ route: routes.messageGet, params: { id }, options });
  }
}

export class CampaignsResource extends Resource {
  /** `status` keeps the campaigns with at least one message in that status. */
  list(params: StatusListParams = {}, options?: RequestOptions): PagedList<CampaignRecord> {
    return this.paginate(routes.campaignList, params, options);
  }

  get(id: string, options?: RequestOptions): Promise<WithResponse<CampaignRecord>> {
    return this.request({ route: routes.campaignGet, params: { id }, options });
  }
}

export class BalanceResource extends Resource {
  get(options?: RequestOptions): Promise<WithResponse<Balance>> {
    return this.request({ route: routes.balanceGet, options });
  }
}

export class PricingResource extends Resource {
  get(options?: RequestOptions): Promise<WithResponse<Pricing>> {
    return this.request({ route: routes.pricingGet, options });
  }
}

export class WebhooksResource extends Resource {
  /** The result carries the signing `secret`, shown only this once. */
  create(body: WebhookCreateRequest, options?: RequestOptions): Promise<WithResponse<WebhookRegistration>> {
    return this.request({ route: routes.webhookCreate, body, options });
  }

  list(params: ListParams = {}, options?: RequestOptions): PagedList<WebhookEndpoint> {
    return this.paginate(routes.webhookList, params, options);
  }

  get(id: string, options?: RequestOptions): Promise<WithResponse<WebhookEndpoint>> {
    return this.request({ route: routes.webhookGet, params: { id }, options });
  }

  update(id: string, body: WebhookUpdateRequest, options?: RequestOptions): Promise<WithResponse<WebhookEndpoint>> {
    return this.request({ route: routes.webhookUpdate, params: { id }, body, options });
  }

  async delete(id: string, options?: RequestOptions): Promise<WithResponse<Deleted>> {
    const { meta } = await this.pipeline.call({ route: routes.webhookDelete, params: { id }, options });
    return withResponse({ id, deleted: true as const }, meta);
  }
}

export type { Page };
