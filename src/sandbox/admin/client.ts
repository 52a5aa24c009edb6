/** A small typed client for the sandbox's admin API, used by tests, the CLI and the dev stack. */
import { z } from 'zod';
import { Account, CreatedToken, InboxEntry, LedgerEntry } from '../../api/admin.js';
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
