/**
 * The wallet: integer minor units, every movement written to the ledger in the same transaction as the
 * balance change. Charges are checked against the balance (402) and the monthly spend cap (403).
 */
import type { LedgerEntry, LedgerKind } from '../api/admin.js';
import type { AccountRow } from './accounts.js';
import type { Db } from './db.js';
import { ApiError } from './http/errors.js';
import { startOfUtcMonth, timestampOf } from './time.js';

export interface Charge {
  kind: Exclude<LedgerKind, 'credit'>;
  amount: number;
  reference: string | null;
  recipient: string | null;
}

/** What the account spent since the start of the current UTC calendar month (the spend-cap period). */
export function spentThisMonth(db: Db, accountId: string, now: number): number {
  const row = db
    .prepare(
      'SELECT COALESCE(SUM(amount), 0) AS spent FROM ledger ' +
        "WHERE account_id = ? AND kind != 'credit' AND created_at >= ?",
    )
    .get(accountId, startOfUtcMonth(now)) as { spent: number };
  return row.spent;
}

/**
 * Refuses a charge of `total` the account cannot make: 402 when the balance is short, otherwise 403 when
 * it would take this month's spending past the cap. Call inside the transaction that then charges.
 */
export function assertCanSpend(db: Db, account: AccountRow, total: number, now: number): void {
  if (account.balance < total) {
    throw new ApiError(
      'insufficient_balance',
      `This costs ${total} ${account.currency} minor units; the balance is ${account.balance}`,
    );
  }
  if (account.spend_cap !== null) {
    const spent = spentThisMonth(db, account.id, now);
    if (spent + total > account.spend_cap) {
      throw new ApiError(
        'spend_cap_exceeded',
        `This costs ${total}; ${spent} of the monthly spend cap of ${account.spend_cap} is already used`,
      );
    }
  }
}

/** Debits every charge and writes one ledger entry each. Must run inside a transaction after assertCanSpend. */
export function applyCharges(
  db: Db,
  account: AccountRow,
  charges: Charge[],
  idempotencyKey: string | null,
  now: number,
): number {
  const insert = db.prepare(
    'INSERT INTO ledger (account_id, kind, reference, recipient, amount, balance_after, idempotency_key, created_at) ' +
      'VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  let balance = account.balance;
  for (const charge of charges) {
    balance -= charge.amount;
    insert.run(
      account.id,
      charge.kind,
      charge.reference,
      charge.recipient,
      charge.amount,
      balance,
      idempotencyKey,
      now,
    );
  }
  db.prepare('UPDATE accounts SET balance = ? WHERE id = ?').run(balance, account.id);
  return balance;
}

export function credit(db: Db, accountId: string, amount: number, now: number): void {
  db.transaction(() => {
    db.prepare('UPDATE accounts SET balance = balance + ? WHERE id = ?').run(amount, accountId);
    const { balance } = db.prepare('SELECT balance FROM accounts WHERE id = ?').get(accountId) as { balance: number };
    db.prepare(
      "INSERT INTO ledger (account_id, kind, amount, balance_after, created_at) VALUES (?, 'credit', ?, ?, ?)",
    ).run(accountId, amount, balance, now);
  })();
}

interface LedgerRow {
  seq: number;
  kind: LedgerKind;
  reference: string | null;
  recipient: string | null;
  amount: number;
  balance_after: number;
  idempotency_key: string | null;
  created_at: number;
  currency: string;
}

/** The whole ledger of an account, oldest first. */
export function ledgerOf(db: Db, accountId: string): LedgerEntry[] {
  const rows = db
    .prepare(
      'SELECT l.*, a.currency FROM ledger l JOIN accounts a ON a.id = l.account_id ' +
        'WHERE l.account_id = ? ORDER BY l.seq',
    )
    .all(accountId) as LedgerRow[];
  return rows.map((r) => ({
    id: `led_${r.seq}`,
    kind: r.kind,
    amount: r.amount,
    balance_after: r.balance_after,
    currency: r.currency,
    reference: r.reference,
    recipient: r.recipient,
    idempotency_key: r.idempotency_key,
    created_at: timestampOf(r.created_at),
  }));
}
