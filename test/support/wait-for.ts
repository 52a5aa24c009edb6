/** Polls `probe` until it yields a value (errors count as "not yet"), or fails after `timeoutMs` naming `what`. */
export async function waitFor<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = 60_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
