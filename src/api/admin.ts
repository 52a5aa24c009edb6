/**
 * The sandbox's admin API: the account "dashboard" the spec mentions (tokens, IP allowlist, approved
 * senders, wallet, spend cap, rate limit) plus an inbox to read what was sent. Guarded by an admin token.
 */
import { z } from 'zod';
import { Currency, Id, MinorUnits, OffsetDateTime, PlusNumber, RecipientNumber, SenderId } from './common.js';
import { FINAL_STATUSES } from './constants.js';
import { Scope } from './scopes.js';

export const CreateAccountRequest = z.strictObject({
  name: z.string().min(1).max(200),
  balance: MinorUnits.nonnegative().default(0),
  currency: Currency.default('USD'),
});
export const Account = z.looseObject({
  id: Id,
  name: z.string(),
  balance: MinorUnits,
  currency: Currency,
  created_at: OffsetDateTime,
});
export type Account = z.infer<typeof Account>;

export const CreateTokenRequest = z.strictObject({
  scopes: z.array(Scope).min(1),
  name: z.string().min(1).max(200).optional(),
});
/** The token's secret value is in this response only; the sandbox stores a hash. */
export const CreatedToken = z.looseObject({
  id: Id,
  token: z.string(),
  scopes: z.array(Scope),
  name: z.string().nullable(),
});
export type CreatedToken = z.infer<typeof CreatedToken>;

export const IpAllowlistRequest = z.strictObject({ addresses: z.array(z.union([z.ipv4(), z.ipv6()])).max(100) });
export const AddSenderRequest = z.strictObject({ sender: SenderId });
export const CreditRequest = z.strictObject({ amount: MinorUnits.positive() });
export const SpendCapRequest = z.strictObject({ amount: MinorUnits.nonnegative().nullable() });
export const RateLimitRequest = z.strictObject({ per_minute: z.number().int().min(1).max(1_000_000) });

export const InboxQuery = z.strictObject({ to: RecipientNumber });
export const InboxEntry = z.looseObject({
  provider_message_id: Id,
  kind: z.enum(['sms', 'otp', 'voice']),
  mobile_number: PlusNumber,
  sender: z.string(),
  text: z.string(),
  code: z.string().nullable().optional().meta({ description: 'The code, for an OTP text or call' }),
  created_at: OffsetDateTime,
});
export type InboxEntry = z.infer<typeof InboxEntry>;

/** What a ledger entry records: a credit to the wallet, or a charge for one kind of operation. */
export const LedgerKind = z.enum(['credit', 'sms', 'otp', 'voice', 'lookup', 'email_verification']);
export type LedgerKind = z.infer<typeof LedgerKind>;

/**
 * One movement of an account's wallet (GET /admin/accounts/{id}/ledger). `amount` is positive: a credit
 * adds it, every other kind subtracts it. A send writes one entry per recipient, so "each recipient was
 * charged exactly once" can be checked from the ledger.
 */
export const LedgerEntry = z.looseObject({
  id: Id,
  kind: LedgerKind,
  amount: MinorUnits.nonnegative(),
  balance_after: MinorUnits,
  currency: Currency,
  reference: z.string().nullable().meta({ description: 'provider_message_id, call, lookup or OTP id' }),
  recipient: z.string().nullable().meta({ description: 'Number (with +) or email address charged for' }),
  idempotency_key: z.string().nullable(),
  created_at: OffsetDateTime,
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

/** An API token as the account's list shows it: its prefix, never the secret (GET /admin/accounts/{id}/tokens). */
export const TokenSummary = z.looseObject({
  id: Id,
  name: z.string().nullable(),
  prefix: z.string().nullable().meta({ description: "The secret's first characters; null for older tokens" }),
  scopes: z.array(Scope),
  created_at: OffsetDateTime,
  last_used_at: OffsetDateTime.nullable(),
  revoked_at: OffsetDateTime.nullable(),
});
export type TokenSummary = z.infer<typeof TokenSummary>;

/** One try at sending a webhook delivery, as the dispatcher recorded it. */
export const DeliveryAttempt = z.looseObject({
  attempt: z.number().int().positive(),
  at: OffsetDateTime,
  latency_ms: z.number().int().nonnegative(),
  status: z.number().int().nullable().meta({ description: 'HTTP status; null when no answer came' }),
  error: z.string().nullable(),
  response_start: z.string().nullable().meta({ description: "The start of the receiver's answer" }),
});
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;

export const DeliveryState = z.enum(['pending', 'delivered', 'failed', 'cancelled']);

/** A webhook delivery (one body to one endpoint; its id is the webhook-id) with every attempt so far. */
export const DeliveryRecord = z.looseObject({
  id: Id,
  webhook_id: Id,
  url: z.string().nullable(),
  state: DeliveryState,
  event_types: z.array(z.string()),
  message_ids: z.array(z.string()),
  body: z.string(),
  attempts: z.array(DeliveryAttempt),
  next_attempt_at: OffsetDateTime.nullable().meta({ description: 'When a pending delivery is tried next' }),
  created_at: OffsetDateTime,
});
export type DeliveryRecord = z.infer<typeof DeliveryRecord>;

export const DeliveryListQuery = z.strictObject({
  message_id: z.string().min(1).max(200).optional(),
  state: DeliveryState.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export const WebhooksPausedRequest = z.strictObject({ paused: z.boolean() });

/** For `duration_ms` (at most an hour; 0 ends it), the account's API calls answer 500 before doing anything. */
export const ServerErrorsRequest = z.strictObject({ duration_ms: z.number().int().min(0).max(3_600_000) });

/** A number's forced outcome: its next messages end in `outcome` (`none`: never final), optionally after a delay. */
export const ForcedOutcomeRequest = z.strictObject({
  outcome: z.enum([...FINAL_STATUSES, 'none']),
  final_delay_ms: z.number().int().min(0).max(86_400_000).nullable().default(null),
});
export const ForcedOutcome = z.looseObject({
  mobile_number: PlusNumber,
  outcome: ForcedOutcomeRequest.shape.outcome,
  final_delay_ms: z.number().int().nullable(),
});
export type ForcedOutcome = z.infer<typeof ForcedOutcome>;
