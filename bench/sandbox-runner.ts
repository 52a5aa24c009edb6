/**
 * The provider sandbox in a process of its own, for the benchmarks: `startSandbox` with the JSON options
 * given as the first argument (the caller passes its own admin token, so nothing secret is printed). Prints
 * `sandbox listening on <url>` once it serves; SIGTERM or SIGINT closes it.
 */
import { type SandboxOptions, startSandbox } from '../src/sandbox/index.js';

const options = JSON.parse(process.argv[2] ?? '{}') as SandboxOptions;
const sandbox = await startSandbox({ ...options, log: (line) => process.stderr.write(`${line}\n`) });
process.stdout.write(`sandbox listening on ${sandbox.url}\n`);

const stop = () => {
  sandbox.close().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`sandbox did not close cleanly: ${String(error)}\n`);
      process.exit(1);
    },
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
