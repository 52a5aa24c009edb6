/**
 * The sandbox's settings: what `startSandbox` accepts, and the same settings with every default filled in.
 * Production-like defaults live here; tests pass fast timings (see test/support/sandbox.ts).
 */
import type { Prices } from '../api/account.js';

export interface CarrierTiming {
  /** queued → sent (submission to the carrier). */
  submitMs: number;
  /** sent → final state. */
  finalMs: number;
  /** Each step of a voice call: queued → ringing → in_progress → final. */
  voiceStepMs: number;
}

/**
 * Fault injection for webhook deliveries, off by default. Receivers must cope with all of these anyway
 * (Standard Webhooks: at-least-once, unordered), so tests can turn them on to prove it.
 */
export interface WebhookChaos {
  /** Probability (0..1) that a successful delivery is sent a second time, with the same webhook-id. */
  duplicateProbability?: number;
  /** Each first attempt is held back by a random delay up to this many ms, which also reorders deliveries. */
  maxExtraDelayMs?: number;
  /**
   * Probability (0..1) that a successful delivery is followed by a contradicting one, as a carrier's late receipt
   * may be: each of its events again with another final state, a second later, under a webhook-id of its own.
   * The messages keep their first state in the API: a receiver must keep the first final state it recorded.
   */
  contradictProbability?: number;
  /** Source of randomness, injectable for deterministic tests. */
  random?: () => number;
}

export interface WebhookTiming {
  /** Delay before each retry after a failed attempt; the delivery is abandoned when the list runs out. */
  retryScheduleMs: number[];
  /** A delivery attempt that takes longer than this counts as failed. */
  timeoutMs: number;
  /** Most events in one message.status.batch body. */
  batchMax: number;
  /** Most deliveries in flight at once. */
  concurrency: number;
  chaos?: WebhookChaos;
}

export interface SandboxOptions {
  /** TCP port; 0 picks a free one. Default 4010. */
  port?: number;
  /** Interface to bind. Default 127.0.0.1. */
  host?: string;
  /** SQLite file, or `:memory:`. Default `.data/sandbox.db`. */
  db?: string;
  /** Bearer token of the admin API; generated (and reported in RunningSandbox) when omitted. */
  adminToken?: string;
  /** Express `trust proxy`: only then does X-Forwarded-For decide the client address. Default false. */
  trustProxy?: boolean | string | number;
  /** The clock (ms since epoch) behind every expiry, due time and timestamp; injectable so tests move time. */
  now?: () => number;
  /** How often the carrier and the webhook dispatcher look for due work. Default 100 ms. */
  tickMs?: number;
  /** Processing time of a charged send, during which its Idempotency-Key is held (409 for a duplicate). */
  sendLatencyMs?: number;
  carrier?: Partial<CarrierTiming>;
  webhooks?: Partial<WebhookTiming>;
  /** Requests per minute per token for accounts without their own limit. Default 120 (the spec's). */
  defaultRatePerMinute?: number;
  /** POST /otp/send requests per minute per source IP, across all accounts. Default 30. */
  otpPerIpPerMinute?: number;
  /** Largest accepted request body, in bytes. Default 256 KiB. */
  bodyLimitBytes?: number;
  /** Price list in minor units of the account's currency. */
  prices?: Partial<Prices>;
  /** Where problems are reported (failed webhook attempts, internal errors); default stderr. `() => {}` silences. */
  log?: (line: string) => void;
}

export const DEFAULT_PRICES: Prices = {
  sms_segment: 3,
  otp: 5,
  voice_call: 12,
  lookup: 1,
  email_verification: 1,
};

export const DEFAULTS = {
  port: 4010,
  host: '127.0.0.1',
  db: '.data/sandbox.db',
  tickMs: 100,
  sendLatencyMs: 10,
  carrier: { submitMs: 500, finalMs: 2000, voiceStepMs: 1000 } satisfies CarrierTiming,
  webhooks: {
    // Standard Webhooks suggests a schedule like this one: quick retries first, then hours apart.
    retryScheduleMs: [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000],
    timeoutMs: 10_000,
    batchMax: 100,
    // A provider sending at volume keeps many deliveries open: with few, a receiver that answers in 40 ms
    // would be held to a few hundred bodies per second by the provider, not by its own speed.
    concurrency: 64,
  } satisfies WebhookTiming,
  defaultRatePerMinute: 120,
  otpPerIpPerMinute: 30,
  bodyLimitBytes: 256 * 1024,
} as const;

export interface ResolvedOptions {
  port: number;
  host: string;
  db: string;
  adminToken: string;
  trustProxy: boolean | string | number;
  now: () => number;
  tickMs: number;
  sendLatencyMs: number;
  carrier: CarrierTiming;
  webhooks: WebhookTiming;
  defaultRatePerMinute: number;
  otpPerIpPerMinute: number;
  bodyLimitBytes: number;
  prices: Prices;
  log: (line: string) => void;
}

export function resolveOptions(options: SandboxOptions, adminToken: string): ResolvedOptions {
  return {
    port: options.port ?? DEFAULTS.port,
    host: options.host ?? DEFAULTS.host,
    db: options.db ?? DEFAULTS.db,
    adminToken,
    trustProxy: options.trustProxy ?? false,
    now: options.now ?? Date.now,
    tickMs: options.tickMs ?? DEFAULTS.tickMs,
    sendLatencyMs: options.sendLatencyMs ?? DEFAULTS.sendLatencyMs,
    carrier: { ...DEFAULTS.carrier, ...options.carrier },
    webhooks: {
      ...DEFAULTS.webhooks,
      retryScheduleMs: [...DEFAULTS.webhooks.retryScheduleMs],
      ...options.webhooks,
    },
    defaultRatePerMinute: options.defaultRatePerMinute ?? DEFAULTS.defaultRatePerMinute,
    otpPerIpPerMinute: options.otpPerIpPerMinute ?? DEFAULTS.otpPerIpPerMinute,
    bodyLimitBytes: options.bodyLimitBytes ?? DEFAULTS.bodyLimitBytes,
    prices: { ...DEFAULT_PRICES, ...options.prices },
    log: options.log ?? ((line) => console.error(line)),
  };
}
