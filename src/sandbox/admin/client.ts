/** A small typed client for the sandbox's admin API, used by tests, the CLI and the dev stack. */
import { z } from 'zod';
import {
  Account,
  CreatedToken,
  DeliveryRecord,
  ForcedOutcome,
  InboxEntry,
  LedgerEntry,
  TokenSummary,
} from '../../api/admin.js';
import { ErrorBody } from '../../api/errors.js';
import type { Scope } from '../../api/scopes.js';

export class SandboxAdminError extends Error {
  override name = 'SandboxAdminError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: { path: string; message: string }[],
  ) {
    super(message);
  }
}

export class SandboxAdmin {
  private readonly url: string;
  private readonly adminToken: string;

  constructor(opts: { url: string; adminToken: string }) {
    this.url = opts.url.replace(/\/+$/, '');
    this.adminToken = opts.adminToken;
  }

  createAccount(input: { name: string; balance?: number; currency?: string }): Promise<Account> {
    return this.call('POST', '/accounts', input, Account);
  }

  createToken(accountId: string, input: { scopes: Scope[]; name?: string }): Promise<CreatedToken> {
    return this.call('POST', `/accounts/${enc(accountId)}/tokens`, input, CreatedToken);
  }

  async revokeToken(tokenId: string): Promise<void> {
    await this.call('DELETE', `/tokens/${enc(tokenId)}`);
  }

  async setIpAllowlist(accountId: string, addresses: string[]): Promise<void> {
    await this.call('PUT', `/accounts/${enc(accountId)}/ip-allowlist`, { addresses });
  }

  async addSender(accountId: string, sender: string): Promise<void> {
    await this.call('POST', `/accounts/${enc(accountId)}/senders`, { sender });
  }

  async credit(accountId: string, amount: number): Promise<void> {
    await this.call('POST', `/accounts/${enc(accountId)}/credit`, { amount });
  }

  async setSpendCap(accountId: string, amount: number | null): Promise<void> {
    await this.call('PUT', `/accounts/${enc(accountId)}/spend-cap`, { amount });
  }

  async setRateLimit(accountId: string, perMinute: number): Promise<void> {
    await this.call('PUT', `/accounts/${enc(accountId)}/rate-limit`, { per_minute: perMinute });
  }

  /** What was sent to `to` (digits only), newest first, texts in clear. */
  inbox(to: string): Promise<InboxEntry[]> {
    return this.call('GET', `/inbox?to=${enc(to)}`, undefined, z.array(InboxEntry));
  }

  /** Every credit and charge of the account, oldest first. */
  ledger(accountId: string): Promise<LedgerEntry[]> {
    return this.call('GET', `/accounts/${enc(accountId)}/ledger`, undefined, z.array(LedgerEntry));
  }

  /** Every account, newest first. */
  listAccounts(): Promise<Account[]> {
    return this.call('GET', '/accounts', undefined, z.array(Account));
  }

  /** The account's tokens (prefix, scopes, last use; never secrets), newest first. */
  tokens(accountId: string): Promise<TokenSummary[]> {
    return this.call('GET', `/accounts/${enc(accountId)}/tokens`, undefined, z.array(TokenSummary));
  }

  /** The account's webhook deliveries with their attempts, newest first. */
  deliveries(
    accountId: string,
    filter: { messageId?: string; state?: DeliveryRecord['state']; limit?: number } = {},
  ): Promise<DeliveryRecord[]> {
    const query = new URLSearchParams();
    if (filter.messageId) query.set('message_id', filter.messageId);
    if (filter.state) query.set('state', filter.state);
    if (filter.limit) query.set('limit', String(filter.limit));
    const suffix = query.size > 0 ? `?${query}` : '';
    return this.call('GET', `/accounts/${enc(accountId)}/deliveries${suffix}`, undefined, z.array(DeliveryRecord));
  }

  delivery(deliveryId: string): Promise<DeliveryRecord> {
    return this.call('GET', `/deliveries/${enc(deliveryId)}`, undefined, DeliveryRecord);
  }

  /** Queues the delivery for another attempt at once, whatever its state. */
  redeliver(deliveryId: string): Promise<DeliveryRecord> {
    return this.call('POST', `/deliveries/${enc(deliveryId)}/redeliver`, undefined, DeliveryRecord);
  }

  /** Paused, the account's deliveries wait (as during a receiver outage) until resumed. */
  async setWebhooksPaused(accountId: string, paused: boolean): Promise<void> {
    await this.call('PUT', `/accounts/${enc(accountId)}/webhooks-paused`, { paused });
  }

  /** For `durationMs` (0 ends it), the account's API calls answer 500 before doing anything (an outage). */
  async setServerErrors(accountId: string, durationMs: number): Promise<void> {
    await this.call('PUT', `/accounts/${enc(accountId)}/server-errors`, { duration_ms: durationMs });
  }

  /** Forgets the account's messages, calls, campaigns, OTPs and deliveries; keeps tokens, settings and wallet. */
  async resetAccount(accountId: string): Promise<void> {
    await this.call('POST', `/accounts/${enc(accountId)}/reset`);
  }

  /** Messages sent to `to` (digits only) from now on end in `outcome`, optionally after `finalDelayMs`. */
  setOutcome(
    to: string,
    outcome: ForcedOutcome['outcome'],
    finalDelayMs: number | null = null,
  ): Promise<ForcedOutcome> {
    return this.call('PUT', `/outcomes/${enc(to)}`, { outcome, final_delay_ms: finalDelayMs }, ForcedOutcome);
  }

  async clearOutcome(to: string): Promise<void> {
    await this.call('DELETE', `/outcomes/${enc(to)}`);
  }

  outcomes(): Promise<ForcedOutcome[]> {
    return this.call('GET', '/outcomes', undefined, z.array(ForcedOutcome));
  }

  /** A link that signs into the web console once, within ten minutes (it carries a one-time code only). */
  async consoleSignInLink(): Promise<string> {
    return (await this.call('POST', '/console-links', undefined, z.object({ url: z.string() }))).url;
  }

  private async call<T = undefined>(method: string, path: string, body?: unknown, schema?: z.ZodType<T>): Promise<T> {
    const response = await fetch(`${this.url}/admin${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const json: unknown = text ? safeJson(text) : undefined;
    if (!response.ok) {
      const error = ErrorBody.safeParse(json);
      if (error.success)
        throw new SandboxAdminError(response.status, error.data.code, error.data.message, error.data.details);
      throw new SandboxAdminError(
        response.status,
        'unexpected_response',
        `${method} /admin${path} answered ${response.status}`,
      );
    }
    if (!schema) return undefined as T;
    const parsed = z.object({ data: schema }).safeParse(json);
    if (!parsed.success) {
      throw new SandboxAdminError(
        response.status,
        'unexpected_response',
        `${method} /admin${path}: ${parsed.error.message}`,
      );
    }
    return parsed.data.data;
  }
}

function enc(value: string): string {
  return encodeURIComponent(value);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
