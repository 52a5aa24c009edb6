export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** A probe that throws ends the wait with its error; by default a throw counts as "not yet" (a server restarting). */
  failOnError?: boolean;
}

/** Polls `probe` until it yields a truthy value and returns it, or fails after `timeoutMs` naming `what`. */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  options: WaitOptions = {},
): Promise<T> {
  const { timeoutMs = 60_000, intervalMs = 100, failOnError = false } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await (failOnError
      ? probe()
      : Promise.resolve()
          .then(probe)
          .catch(() => undefined));
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
