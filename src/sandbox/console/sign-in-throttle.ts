/**
 * Slows down guessing the admin token on the console's sign-in form: after MAX_FAILURES wrong tokens from one
 * source address within WINDOW_MS, that address is answered 429 with Retry-After until the window ends,
 * without the token being checked. Counted per address, so nobody can lock the admin out from elsewhere; a
 * right token resets its address. Kept in memory, like the console's sessions.
 */
export const SIGN_IN_MAX_FAILURES = 5;
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/** Addresses remembered at most; the oldest are forgotten first. */
const MAX_ADDRESSES = 10_000;

interface Failures {
  count: number;
  /** When the address's window ends. */
  until: number;
}

export class SignInThrottle {
  private readonly failures = new Map<string, Failures>();

  constructor(private readonly now: () => number) {}

  /** Seconds `address` must wait before it may try again, or 0 when it may try now. */
  waitSeconds(address: string): number {
    const entry = this.current(address);
    if (!entry || entry.count < SIGN_IN_MAX_FAILURES) return 0;
    return Math.max(1, Math.ceil((entry.until - this.now()) / 1000));
  }

  failed(address: string): void {
    const entry = this.current(address) ?? { count: 0, until: this.now() + SIGN_IN_WINDOW_MS };
    entry.count += 1;
    this.failures.delete(address); // re-inserted last: the map stays in order of last failure
    this.failures.set(address, entry);
    if (this.failures.size > MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
  }

  succeeded(address: string): void {
    this.failures.delete(address);
  }

  private current(address: string): Failures | undefined {
    const entry = this.failures.get(address);
    if (entry && entry.until <= this.now()) {
      this.failures.delete(address);
      return undefined;
    }
    return entry;
  }
}
