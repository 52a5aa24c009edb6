/**
 * A message store shared by this process and child processes (workers started by a test): a SQLite file in a
 * fresh temporary folder. The in-memory default would give each process a store of its own, so the
 * outcomes the ingress records would never reach a worker's workflows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SharedStoreFile {
  /** For `startTestStack({ store: { file } })`. */
  file: string;
  /** For `startWorkerProcess(stack, env)`. */
  env: { MSGFLOW_STORE_FILE: string };
  remove(): void;
}

export function sharedStoreFile(): SharedStoreFile {
  const folder = mkdtempSync(join(tmpdir(), 'msgflow-store-'));
  const file = join(folder, 'msgflow.db');
  return {
    file,
    env: { MSGFLOW_STORE_FILE: file },
    remove: () => rmSync(folder, { recursive: true, force: true }),
  };
}
