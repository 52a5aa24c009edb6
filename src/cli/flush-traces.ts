/**
 * The end of every command that traced: its spans are sent before the process exits. A collector that cannot be
 * reached costs the traces, said on stderr, never the command's outcome: a send that went out must not exit 1
 * (a script would send it again).
 */
import type { Tracing } from '../tracing/setup.js';

export async function flushTraces(tracing: Tracing | undefined): Promise<void> {
  try {
    await tracing?.shutdown();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    console.error(`msgflow: traces not exported to ${tracing?.endpoint} (${why})`);
  }
}
