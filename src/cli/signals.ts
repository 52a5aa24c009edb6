/**
 * Resolves on the first SIGINT or SIGTERM, so a command can shut down in order. The listeners stay, so later
 * signals are ignored while it does: `npm run` passes the terminal's Ctrl-C on a second time, and dying then
 * would leave what the command started (a Temporal dev server in its own process group) running. SIGKILL
 * still ends it.
 */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.on('SIGINT', resolve);
    process.on('SIGTERM', resolve);
  });
}
