/**
 * Injected server errors, a test control: for a while, an account's API calls answer 500 before any work is
 * done (nothing sent, nothing charged), as a provider's failing front end would. In memory only: a restart
 * ends them.
 */
export class ServerErrors {
  private readonly until = new Map<string, number>();

  /** The account's calls fail until `untilMs` (a time at or before now ends them). */
  set(accountId: string, untilMs: number): void {
    this.until.set(accountId, untilMs);
  }

  /** When the account's calls stop failing, or null when they do not fail. */
  activeUntil(accountId: string, now: number): number | null {
    const until = this.until.get(accountId);
    if (until === undefined || until <= now) {
      this.until.delete(accountId);
      return null;
    }
    return until;
  }
}
