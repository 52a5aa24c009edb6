/** MessagingClient: the one way msgflow talks to the provider (workflows' activities, ingress, services). */
import { parseEnv, ProviderEnv } from '../config.js';
import { InvalidInputError } from './errors.js';
import type { RateLimitState } from './headers.js';
import { DEFAULTS, type MessagingClientOptions } from './options.js';
import { RequestPipeline } from './request.js';
import {
  BalanceResource,
  CampaignsResource,
  EmailResource,
  LookupsResource,
  MessagesResource,
  OtpResource,
  PricingResource,
  SmsResource,
  VoiceResource,
  WebhooksResource,
} from './resources.js';
import { requireInteger } from './validation.js';

const CLIENT_VERSION = '0.2.0';

export class MessagingClient {
  readonly sms: SmsResource;
  readonly otp: OtpResource;
  readonly voice: VoiceResource;
  readonly lookups: LookupsResource;
  readonly email: EmailResource;
  readonly messages: MessagesResource;
  readonly campaigns: CampaignsResource;
  readonly balance: BalanceResource;
  readonly pricing: PricingResource;
  readonly webhooks: WebhooksResource;
  private readonly pipeline: RequestPipeline;

  constructor(options: MessagingClientOptions) {
    const baseUrl = checkBaseUrl(options.baseUrl);
    // The token goes into a header: anything but visible ASCII would make every request fail as a "network error".
    if (typeof options.token !== 'string' || !/^[!-~]+$/.test(options.token)) {
      throw new InvalidInputError('Invalid token: must be a non-empty string of visible ASCII characters', [
        { path: 'token', message: 'must be a non-empty string of visible ASCII characters' },
      ]);
    }
    const numbers = {
      maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs,
      initialRetryDelayMs: options.initialRetryDelayMs ?? DEFAULTS.initialRetryDelayMs,
      maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULTS.maxRetryDelayMs,
    };
    for (const [name, value] of Object.entries(numbers)) requireInteger(value, name, name === 'timeoutMs' ? 1 : 0);

    this.pipeline = new RequestPipeline({
      ...numbers,
      baseUrl,
      token: options.token,
      fetch: options.fetch ?? globalThis.fetch,
      logPersonalData: options.logPersonalData ?? false,
      strictResponses: options.strictResponses ?? false,
      userAgent: options.userAgent ?? `msgflow-client/${CLIENT_VERSION} node/${process.versions.node}`,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    this.sms = new SmsResource(this.pipeline);
    this.otp = new OtpResource(this.pipeline);
    this.voice = new VoiceResource(this.pipeline);
    this.lookups = new LookupsResource(this.pipeline);
    this.email = new EmailResource(this.pipeline);
    this.messages = new MessagesResource(this.pipeline);
    this.campaigns = new CampaignsResource(this.pipeline);
    this.balance = new BalanceResource(this.pipeline);
    this.pricing = new PricingResource(this.pipeline);
    this.webhooks = new WebhooksResource(this.pipeline);
  }

  /**
   * A client configured from MSGFLOW_API_BASE_URL and MSGFLOW_API_TOKEN (see src/config.ts); `overrides`
   * adds or replaces any option (logger, retries…).
   */
  static fromEnv(
    env: NodeJS.ProcessEnv = process.env,
    overrides: Partial<MessagingClientOptions> = {},
  ): MessagingClient {
    const config = parseEnv(ProviderEnv, env);
    const token = overrides.token ?? config.MSGFLOW_API_TOKEN;
    if (!token)
      throw new InvalidInputError('MSGFLOW_API_TOKEN is not set', [{ path: 'MSGFLOW_API_TOKEN', message: 'required' }]);
    return new MessagingClient({ ...overrides, baseUrl: overrides.baseUrl ?? config.MSGFLOW_API_BASE_URL, token });
  }

  /** Rate-limit state (X-RateLimit-*) of the most recent response, successful or not. */
  get rateLimit(): RateLimitState | undefined {
    return this.pipeline.rateLimit;
  }
}

function checkBaseUrl(value: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new InvalidInputError('Invalid baseUrl: must be an absolute http(s) URL such as http://127.0.0.1:4010/v1', [
      { path: 'baseUrl', message: 'must be an absolute http(s) URL' },
    ]);
  }
  // Paths in the route table start with "/", so the base keeps its own path but no trailing slash.
  return url.toString().replace(/\/+$/, '');
}
