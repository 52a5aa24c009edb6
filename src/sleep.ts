/**
 * msgflow's one sleep (client retries, services' polls and backoffs, the sandbox's delays): waits at least `ms` (timers may fire a little early; the deadline is re-checked), and rejects with the
 * signal's reason as soon as it is aborted.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const wait = () => {
      const left = deadline - Date.now();
      if (left <= 0) {
        signal?.removeEventListener('abort', onAbort);
        return resolve();
      }
      timer = setTimeout(wait, left);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    wait();
  });
}
