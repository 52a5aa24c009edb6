/**
 * The sandbox's admin API: the account "dashboard" the spec mentions (tokens, IP allowlist, approved
 * senders, wallet, spend cap, rate limit) plus an inbox to read what was sent. Guarded by an admin token.
 */
import { z } from 'zod';
import { Currency, Id, MinorUnits, OffsetDateTime, PlusNumber, RecipientNumber, SenderId } from './common.js';
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
