/**
 * The benchmarks' ceiling workflow: one workflow task, no activity, no timer. How many of these the
 * Temporal server and one worker complete per second bounds any workflow msgflow runs on the same machine.
 * Bundled on its own (bench/ceiling.ts), never part of workflows/.
 */
export async function trivialWorkflow(n: number): Promise<number> {
  return n;
}
