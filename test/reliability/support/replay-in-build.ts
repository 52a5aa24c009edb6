/**
 * Replays recorded histories against the workflow code of another checkout (a release's build), as its
 * versioned worker bundles it: `node --import tsx replay-in-build.ts <checkout> <history.json>...`. Prints
 * one line per history that fails and exits 1 when any does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from '@temporalio/worker';

const [root, ...files] = process.argv.slice(2);
if (!root || files.length === 0) throw new Error('usage: replay-in-build.ts <checkout> <history.json>...');
const { bundleMsgflowWorkflows } = (await import(pathToFileURL(join(root, 'src/worker.ts')).href)) as {
  bundleMsgflowWorkflows(options: { versioned: boolean }): Promise<{ code: string }>;
};
const workflowBundle = await bundleMsgflowWorkflows({ versioned: true });
const histories = files.map((file) => ({
  workflowId: file,
  history: JSON.parse(readFileSync(file, 'utf8')) as unknown,
}));
let failed = 0;
for await (const result of Worker.runReplayHistories({ workflowBundle }, histories as never)) {
  if (!result.error) continue;
  failed++;
  console.log(`${result.workflowId}: ${result.error.message}`);
}
console.log(`replayed ${files.length}, failed ${failed}`);
process.exitCode = failed === 0 ? 0 : 1;
