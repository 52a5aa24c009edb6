/**
 * Records the histories of `followCampaignForNexus` (the run behind a `startCampaign` Nexus operation, bundled
 * apart from msgflow's workflows) for the replay test, from real runs: a caller namespace and endpoint, a
 * campaign run to its end and one cancelled by its caller. Written to histories/nexus/; re-run (and commit) when
 * that workflow changes on purpose:
 *
 *   npm run record:histories:nexus
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { nexusCampaignWorkflowId } from '../../src/definitions/workflow-ids.js';
import { startStack } from '../../src/stack.js';
import { resolveTemporalCli } from '../../src/temporal/cli.js';
import { ensureTemporal } from '../../src/temporal/dev-server.js';
import { startNexusCaller } from '../support/nexus-caller/index.js';
import { FAST_TIMINGS } from '../support/sandbox.js';
import { waitFor } from '../support/wait-for.js';
import { fetchHistory } from './history-file.js';

const OUT = new URL('./histories/nexus/', import.meta.url);
const temporal = await ensureTemporal(process.env);
const taskQueue = `record-${randomUUID()}`;
const stack = await startStack({
  temporal,
  taskQueue,
  nexus: true,
  ratePerMinute: 60_000,
  sandbox: { port: 0, db: ':memory:', log: () => {}, ...FAST_TIMINGS },
});
const caller = await startNexusCaller({ namespace: temporal.namespace, taskQueue }, { address: temporal.address });
try {
  mkdirSync(OUT, { recursive: true });
  const cli = await resolveTemporalCli();
  const audience = (count: number, from: number) => ({
    type: 'inline' as const,
    recipients: Array.from({ length: count }, (_, i) => `23480${String(30_000_000 + from + i)}`),
  });
  /** The follow run of a caller's operation: the caller's NexusOperationStarted event links to it. */
  const followRunOf = async (callerWorkflowId: string, key: string) =>
    waitFor(async () => {
      const { events } = await caller.client.workflow.getHandle(callerWorkflowId).fetchHistory();
      const started = events?.find((e) => e.nexusOperationStartedEventAttributes);
      const linked = started?.links?.map((l) => l.workflowEvent?.workflowId ?? '') ?? [];
      return linked.find((id) => id.startsWith(nexusCampaignWorkflowId(key, '')));
    }, `the follow run of ${callerWorkflowId}`);
  const save = async (name: string, workflowId: string) => {
    const { text, history } = await fetchHistory(cli, temporal, workflowId);
    writeFileSync(new URL(`${name}.json`, OUT), text);
    console.log(`recorded ${name} (${history.events.length} events, last ${history.events.at(-1)?.eventType})`);
  };

  const completedKey = `record-${randomUUID()}`;
  const completed = await caller.call('startCampaign', {
    key: completedKey,
    campaign: { sender: 'ACME', message: 'Recorded', audience: audience(4, 0), chunkSize: 2 },
  });
  await save('follow-campaign-completed', await followRunOf(completed.workflowId, completedKey));

  const key = `record-${randomUUID()}`;
  const cancelled = await caller.start('startCampaign', {
    key,
    campaign: { sender: 'ACME', message: 'Recorded', audience: audience(40, 100), chunkSize: 2 },
  });
  await waitFor(
    async () =>
      (
        await stack.msgflow
          .campaign(key)
          .progress()
          .catch(() => ({ sent: 0 }))
      ).sent >= 2,
    'a chunk',
  );
  await cancelled.cancel();
  await cancelled.result().catch(() => undefined);
  const follow = await followRunOf(cancelled.workflowId, key);
  await stack.temporal.workflow
    .getHandle(follow)
    .result()
    .catch(() => undefined);
  await save('follow-campaign-cancelled', follow);
} finally {
  await caller.close();
  await stack.close();
  await temporal.stop();
}
