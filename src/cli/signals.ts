/**
 * Resolves on the first SIGINT or SIGTERM, so a command can shut down in order. Later signals are ignored
 * while it does: `npm run` passes the terminal's Ctrl-C on a second time, and dying then would leave what the
 * command started (a Temporal dev server in its own process group) running. SIGKILL still ends it.
 */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.on('SIGINT', ignoreWhileStopping);
      process.on('SIGTERM', ignoreWhileStopping);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

function ignoreWhileStopping(): void {}
