/**
 * Accounts and what their holder manages in the spec's "dashboard": API tokens (stored only as SHA-256
 * hashes, the secret shown once), the IP allowlist, approved senders, spend cap and rate limit.
 */
import { createHash, randomBytes } from 'node:crypto';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { Account, TokenSummary } from '../api/admin.js';
import type { Scope } from '../api/scopes.js';
import type { Db } from './db.js';
import { newId } from './ids.js';
import { timestampOf } from './time.js';

export interface AccountRow {
  id: string;
  name: string;
  currency: string;
  balance: number;
  spend_cap: number | null;
  rate_per_minute: number | null;
  webhooks_paused: number;
  created_at: number;
}

export interface TokenRow {
  id: string;
  account_id: string;
  scopes: Scope[];
  name: string | null;
}

const TOKEN_PREFIX = 'sk_sandbox_';
/** How much of a secret is kept in clear to tell tokens apart in a list: the fixed prefix and 4 random characters. */
const SHOWN_PREFIX_LENGTH = TOKEN_PREFIX.length + 4;

export interface TokenListRow {
  id: string;
  name: string | null;
  /** Null for tokens created before prefixes were stored. */
  prefix: string | null;
  scopes: Scope[];
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function accountJson(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    balance: row.balance,
    currency: row.currency,
    created_at: timestampOf(row.created_at),
  };
}

export function tokenJson(row: TokenListRow): TokenSummary {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    created_at: timestampOf(row.created_at),
    last_used_at: row.last_used_at === null ? null : timestampOf(row.last_used_at),
    revoked_at: row.revoked_at === null ? null : timestampOf(row.revoked_at),
  };
}

/** Every account, newest first. */
export function listAccounts(db: Db): AccountRow[] {
  return db.prepare('SELECT * FROM accounts ORDER BY seq DESC').all() as AccountRow[];
}

export function getAccount(db: Db, id: string): AccountRow | undefined {
  return db.prepare('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
}

export function insertAccount(db: Db, input: { name: string; currency: string; now: number }): AccountRow {
  const id = newId('acct');
  db.prepare('INSERT INTO accounts (id, name, currency, balance, created_at) VALUES (?, ?, ?, 0, ?)').run(
    id,
    input.name,
    input.currency,
    input.now,
  );
  return getAccount(db, id)!;
}

/** Creates a token and returns its secret: the only time it exists outside the caller's hands. */
export function createToken(
  db: Db,
  accountId: string,
  input: { scopes: Scope[]; name?: string | undefined; now: number },
): { id: string; token: string; prefix: string; scopes: Scope[]; name: string | null } {
  const id = newId('tok');
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const scopes = [...new Set(input.scopes)];
  const prefix = token.slice(0, SHOWN_PREFIX_LENGTH);
  db.prepare(
    'INSERT INTO tokens (id, account_id, hash, prefix, scopes, name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(id, accountId, hashToken(token), prefix, JSON.stringify(scopes), input.name ?? null, input.now);
  return { id, token, prefix, scopes, name: input.name ?? null };
}

/** An account's tokens, newest first, revoked ones included; never their secrets. */
export function listTokens(db: Db, accountId: string): TokenListRow[] {
  const rows = db
    .prepare(
      'SELECT id, name, prefix, scopes, created_at, last_used_at, revoked_at FROM tokens WHERE account_id = ? ORDER BY seq DESC',
    )
    .all(accountId) as (Omit<TokenListRow, 'scopes'> & { scopes: string })[];
  return rows.map((r) => ({ ...r, scopes: JSON.parse(r.scopes) as Scope[] }));
}

/** Records a use, at most once a second per token, so a burst of calls does not turn into a burst of writes. */
export function touchToken(db: Db, tokenId: string, now: number): void {
  db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)').run(
    now,
    tokenId,
    now - 1000,
  );
}

/** The live (not revoked) token with this secret, if any. */
export function findToken(db: Db, token: string): TokenRow | undefined {
  const row = db
    .prepare('SELECT id, account_id, scopes, name FROM tokens WHERE hash = ? AND revoked_at IS NULL')
    .get(hashToken(token)) as (Omit<TokenRow, 'scopes'> & { scopes: string }) | undefined;
  return row && { ...row, scopes: JSON.parse(row.scopes) as Scope[] };
}

/** Returns false when there is no such token. Revoking twice is harmless. */
export function revokeToken(db: Db, tokenId: string, now: number): boolean {
  const found = db.prepare('SELECT 1 FROM tokens WHERE id = ?').get(tokenId);
  if (!found) return false;
  db.prepare('UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?').run(now, tokenId);
  return true;
}

export function setIpAllowlist(db: Db, accountId: string, addresses: string[]): void {
  db.transaction(() => {
    db.prepare('DELETE FROM ip_allowlist WHERE account_id = ?').run(accountId);
    const insert = db.prepare('INSERT OR IGNORE INTO ip_allowlist (account_id, address) VALUES (?, ?)');
    for (const address of addresses) insert.run(accountId, normalizeIp(address));
  })();
}

/**
 * Whether `ip` may call for this account: spec IP allowlist rules 2 and 3 (an empty list allows all).
 * BlockList compares addresses, not strings, so `::1` and `0:0:0:0:0:0:0:1` are the same address.
 */
export function ipAllowed(db: Db, accountId: string, ip: string | undefined): boolean {
  const rows = db.prepare('SELECT address FROM ip_allowlist WHERE account_id = ?').all(accountId) as {
    address: string;
  }[];
  if (rows.length === 0) return true;
  if (!ip) return false;
  const allowed = new BlockList();
  for (const { address } of rows) allowed.addAddress(address, isIPv4(address) ? 'ipv4' : 'ipv6');
  const client = normalizeIp(ip);
  if (isIPv4(client)) return allowed.check(client, 'ipv4');
  return isIPv6(client) && allowed.check(client, 'ipv6');
}

/** An IPv4 client on a dual-stack socket shows up as ::ffff:a.b.c.d; compare it as plain IPv4. */
export function normalizeIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1]! : ip.toLowerCase();
}

export function addSender(db: Db, accountId: string, sender: string): void {
  db.prepare('INSERT OR IGNORE INTO senders (account_id, sender) VALUES (?, ?)').run(accountId, sender);
}

export function isSenderApproved(db: Db, accountId: string, sender: string): boolean {
  return db.prepare('SELECT 1 FROM senders WHERE account_id = ? AND sender = ?').get(accountId, sender) !== undefined;
}

export function setSpendCap(db: Db, accountId: string, amount: number | null): void {
  db.prepare('UPDATE accounts SET spend_cap = ? WHERE id = ?').run(amount, accountId);
}

export function setRateLimit(db: Db, accountId: string, perMinute: number): void {
  db.prepare('UPDATE accounts SET rate_per_minute = ? WHERE id = ?').run(perMinute, accountId);
}
