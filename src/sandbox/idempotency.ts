/**
 * Idempotency keys (spec "Idempotency" 1–4), per account, kept 24 hours.
 *
 * A key is claimed (`in_progress`) before the action starts. The action and the stored response commit in
 * one transaction, so a key is either in progress, or done with the action applied exactly once. A failed
 * action (any error answer) releases the key: nothing was done or charged, and the client may retry the
 * same key after fixing the cause. Keys left `in_progress` by a crash never finished their transaction,
 * so startup releases them too.
 */
import { createHash } from 'node:crypto';
import type { Db } from './db.js';
import { ApiError } from './http/errors.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export type Claim = { kind: 'claimed' } | { kind: 'replay'; response: StoredResponse };

/** Fingerprint of a request: the operation and its body with keys sorted, so formatting does not matter. */
export function requestHash(operation: string, body: unknown): string {
  return createHash('sha256').update(operation).update('\n').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

interface KeyRow {
  request_hash: string;
  state: 'in_progress' | 'done';
  status_code: number | null;
  response: string | null;
  expires_at: number;
}

export class IdempotencyStore {
  constructor(private readonly db: Db) {}

  /** Claims the key, or says why not: replay (done), 409 (in progress), 422 (same key, other request). */
  claim(accountId: string, key: string, hash: string, now: number): Claim {
    return this.db.transaction((): Claim => {
      const row = this.db
        .prepare(
          'SELECT request_hash, state, status_code, response, expires_at FROM idempotency_keys ' +
            'WHERE account_id = ? AND key = ?',
        )
        .get(accountId, key) as KeyRow | undefined;
      if (row && row.expires_at > now) {
        if (row.request_hash !== hash) {
          throw new ApiError(
            'idempotency_key_reused',
            'This Idempotency-Key was already used with a different request; use a new key for a new request',
          );
        }
        if (row.state === 'in_progress') {
          throw new ApiError(
            'idempotency_in_progress',
            'A request with this Idempotency-Key is still in progress; retry shortly',
          );
        }
        return { kind: 'replay', response: { status: row.status_code!, body: JSON.parse(row.response!) } };
      }
      this.db
        .prepare(
          `INSERT INTO idempotency_keys (account_id, key, request_hash, state, created_at, expires_at)
           VALUES (?, ?, ?, 'in_progress', ?, ?)
           ON CONFLICT (account_id, key) DO UPDATE SET request_hash = excluded.request_hash, state = 'in_progress',
             status_code = NULL, response = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at`,
        )
        .run(accountId, key, hash, now, now + IDEMPOTENCY_TTL_MS);
      return { kind: 'claimed' };
    })();
  }

  /** Records the response; call inside the transaction that performed the action. */
  complete(accountId: string, key: string, response: StoredResponse): void {
    this.db
      .prepare(
        "UPDATE idempotency_keys SET state = 'done', status_code = ?, response = ? WHERE account_id = ? AND key = ?",
      )
      .run(response.status, JSON.stringify(response.body), accountId, key);
  }

  release(accountId: string, key: string): void {
    this.db
      .prepare("DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND state = 'in_progress'")
      .run(accountId, key);
  }

  /** Startup: drop claims whose request died with the previous process, and keys past their 24 hours. */
  recover(now: number): void {
    this.db.prepare("DELETE FROM idempotency_keys WHERE state = 'in_progress' OR expires_at <= ?").run(now);
  }

  purgeExpired(now: number): void {
    this.db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?').run(now);
  }
}
