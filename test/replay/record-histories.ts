/**
 * Records real workflow histories for the replay test against a Temporal dev server and the sandbox (see
 * histories/README.md):
 *
 *   npm run record:histories                       the working histories, each workflow run to its end with the
 *                                                  current code; re-run (and commit) when a workflow changes on
 *                                                  purpose
 *   npm run record:histories -- <name>...          only these (the others are kept as they are)
 *   npm run record:histories -- --release <version> a release's histories, each run at its long wait, by a
 *                                                  versioned worker of this code; written once, at the release
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Worker } from '@temporalio/worker';
import { startStack } from '../../src/stack.js';
import { workflowBuildId } from '../../src/temporal/build-id.js';
import { resolveTemporalCli } from '../../src/temporal/cli.js';
import { ensureTemporal } from '../../src/temporal/dev-server.js';
import { bundleMsgflowWorkflows } from '../../src/worker.js';
import { FAST_TIMINGS } from '../support/sandbox.js';
import { fetchHistory, type HistoryJson } from './history-file.js';
import { recordReleaseHistories } from './record-release.js';
import { recordWorkingHistories } from './record-working.js';

const args = process.argv.slice(2);
const releaseAt = args.indexOf('--release');
const release = releaseAt >= 0 ? args[releaseAt + 1] : undefined;
if (releaseAt >= 0 && !/^\d+\.\d+\.\d+$/.test(release ?? '')) {
  console.error('usage: npm run record:histories -- --release <major.minor.patch>');
  process.exit(2);
}
const only = release ? [] : args;
const OUT = new URL(release ? `./histories/${release}/` : './histories/', import.meta.url);
if (release && existsSync(OUT)) {
  console.error(`test/replay/histories/${release}/ exists: a release's histories are recorded once, never again`);
  process.exit(2);
}

const temporal = await ensureTemporal(process.env);
const taskQueue = `record-${randomUUID()}`;
const stack = await startStack({
  temporal,
  taskQueue,
  // A release's fixtures wait on lookups at a rate they can catch mid-run, and on calls that ring for minutes.
  ratePerMinute: release ? 1200 : 60_000,
  sandbox: {
    port: 0,
    db: ':memory:',
    log: () => {},
    ...FAST_TIMINGS,
    ...(release ? { carrier: { ...FAST_TIMINGS.carrier, voiceStepMs: 5 * 60_000 } } : {}),
  },
  audienceAccess: { folders: [tmpdir()], urlHosts: [] },
  // A release's histories are recorded by what an operator runs: a versioned worker with its build id.
  ...(release
    ? { versioning: { deploymentName: taskQueue, buildId: workflowBuildId(), makeCurrent: 'always' as const } }
    : {}),
});
const waiting: string[] = [];
const recorded: Array<{ workflowId: string; history: HistoryJson }> = [];
try {
  mkdirSync(OUT, { recursive: true });
  const cli = await resolveTemporalCli();
  const write = (name: string, text: string, history: HistoryJson) => {
    writeFileSync(new URL(`${name}.json`, OUT), text);
    recorded.push({ workflowId: `${name}.json`, history });
    console.log(`recorded ${name} (${history.events.length} events, last ${history.events.at(-1)?.eventType})`);
  };
  const save = async (name: string, workflowId: string, runId?: string) => {
    if (only.length > 0 && !only.includes(name)) return;
    const { text, history } = await fetchHistory(cli, temporal, workflowId, runId);
    write(name, text, history);
  };
  if (release) {
    await recordReleaseHistories({
      stack,
      save,
      async saveAtWait(name, workflowId, ready, runId) {
        waiting.push(workflowId);
        for (let tries = 0; tries < 600; tries++) {
          const first = await fetchHistory(cli, temporal, workflowId, runId);
          await new Promise((resolve) => setTimeout(resolve, 200));
          const { text, history } = await fetchHistory(cli, temporal, workflowId, runId);
          const types = history.events.map((e) => e.eventType);
          const lastCompleted = types.lastIndexOf('EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
          // At rest: a workflow task done, none due after it, and nothing new since the first look.
          const atRest =
            lastCompleted >= 0 &&
            !types.slice(lastCompleted).some((t) => /WORKFLOW_TASK_(SCHEDULED|STARTED)$/.test(t)) &&
            history.events.length === first.history.events.length;
          if (atRest && (await ready(history))) return write(name, text, history);
        }
        throw new Error(`${name}: the run did not come to rest at its wait`);
      },
    });
    // Every type's, pinned ones too: each must replay against the code that recorded it.
    const bundle = await bundleMsgflowWorkflows({ versioned: true });
    for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, recorded)) {
      if (result.error) throw new Error(`${result.workflowId} does not replay: ${result.error.message}`);
    }
    console.log(`all ${recorded.length} histories of ${release} replay against the code that recorded them`);
  } else {
    await recordWorkingHistories(stack, save);
  }
} finally {
  // The release's runs are left waiting; end them, so a long-lived server keeps nothing of the recording.
  for (const workflowId of new Set(waiting)) {
    await stack.temporal.workflow
      .getHandle(workflowId)
      .terminate('recorded')
      .catch(() => undefined);
  }
  await stack.close();
  await temporal.stop();
}
