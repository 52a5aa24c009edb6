/**
 * Why recent API calls were refused (402 balance, 403 scope/allowlist/spend cap, 422 validation, 429, …),
 * per account, for the console's overview: the newest 50 per account, in memory only (a development aid,
 * not an audit log). Only the route, the error code and its message are kept: never bodies or numbers.
 */
export interface Refusal {
  at: number;
  method: string;
  /** The route's path template, e.g. /sms/send. */
  path: string;
  status: number;
  code: string;
  message: string;
}

const KEEP = 50;

export class Refusals {
  private readonly byAccount = new Map<string, Refusal[]>();
  /** Counts every refusal ever recorded, so live pages notice a new one. */
  total = 0;

  record(accountId: string, refusal: Refusal): void {
    const list = this.byAccount.get(accountId) ?? [];
    list.unshift(refusal);
    list.length = Math.min(list.length, KEEP);
    this.byAccount.set(accountId, list);
    this.total += 1;
  }

  /** Newest first. */
  of(accountId: string): readonly Refusal[] {
    return this.byAccount.get(accountId) ?? [];
  }

  forget(accountId: string): void {
    this.byAccount.delete(accountId);
  }
}
