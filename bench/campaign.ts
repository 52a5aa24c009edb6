/**
 * Campaign end-to-end: an `smsCampaign` of N recipients (default 10,000) through the sandbox with its rate
 * limit lifted and zero carrier delay, timed from start to the result (every message final), beside the
 * ceiling of the same Temporal server for trivial workflows (one workflow task each) measured in the same
 * run, before and after. Also: Temporal history events and workflow tasks per message, over every
 * workflow the campaign caused (its own runs and one message-status workflow per message).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { startStack } from '../src/stack.js';
import { type Benchmark, type BenchContext, round } from './harness.js';

const RECIPIENTS = Number(process.env.MSGFLOW_BENCH_CAMPAIGN_RECIPIENTS ?? 10_000);
const CEILING_WORKFLOWS = Number(process.env.MSGFLOW_BENCH_CEILING_WORKFLOWS ?? Math.min(RECIPIENTS, 2_000));
const CONCURRENCY = Number(process.env.MSGFLOW_BENCH_CONCURRENCY ?? 32);
const sourceExtension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
const TRIVIAL_WORKFLOWS_PATH = fileURLToPath(new URL(`./workflows/trivial.${sourceExtension}`, import.meta.url));

export const campaignBenchmark: Benchmark = {
  name: 'campaign',
  async run(context) {
    const { log } = context;
    const before = await trivialCeiling(context, CEILING_WORKFLOWS);
    log(`ceiling (before): ${round(before.perSecond)} trivial workflows/s`);
    const campaign = await campaignRun(context, RECIPIENTS);
    const after = await trivialCeiling(context, CEILING_WORKFLOWS);
    log(`ceiling (after): ${round(after.perSecond)} trivial workflows/s`);
    const ceiling = (before.perSecond + after.perSecond) / 2;

    return {
      title: `Campaign end-to-end: ${RECIPIENTS} recipients, sandbox unlimited, zero carrier delay`,
      rows: [
        {
          case: `ceiling: trivial workflows (${CEILING_WORKFLOWS}, mean of before/after)`,
          seconds: round((before.seconds + after.seconds) / 2),
          'per second': round(ceiling),
          'events per item': round(before.eventsPerWorkflow),
          'workflow tasks per item': round(before.tasksPerWorkflow),
          'vs ceiling': '100%',
        },
        {
          case: `smsCampaign → all final (${RECIPIENTS} messages)`,
          seconds: round(campaign.seconds),
          'per second': round(campaign.perSecond),
          'events per item': round(campaign.eventsPerMessage, 2),
          'workflow tasks per item': round(campaign.tasksPerMessage, 2),
          'vs ceiling': `${Math.round((100 * campaign.perSecond) / ceiling)}%`,
        },
      ],
      notes: [
        'item = one trivial workflow (ceiling) or one message (campaign); per second = items / seconds from start to the last result',
        `campaign: ${campaign.runs} campaign run(s) (continue-as-new), ${campaign.workflows} workflows in all; events and workflow tasks counted over every one of their histories when the campaign completed`,
        'each message is a message-status workflow of its own (signal-with-start by the ingress and the campaign), which lingers after its outcome: its closing events are not counted',
        'ceiling: the same server, one worker in this process, started with at most the harness concurrency in flight',
        'sandbox: in memory, rate limit 1,000,000/min, carrier submits and finalises at once (tick 10 ms), default send latency; worker, ingress, sandbox and Temporal dev server on this machine',
      ],
    };
  },
};

interface CampaignFigures {
  seconds: number;
  perSecond: number;
  eventsPerMessage: number;
  tasksPerMessage: number;
  runs: number;
  workflows: number;
}

async function campaignRun({ temporal, log }: BenchContext, recipients: number): Promise<CampaignFigures> {
  const stack = await startStack({
    temporal,
    taskQueue: `bench-campaign-${randomUUID()}`,
    sandbox: {
      port: 0,
      db: ':memory:',
      log: () => {},
      tickMs: 10,
      carrier: { submitMs: 0, finalMs: 0 },
      webhooks: { retryScheduleMs: [200, 1_000, 5_000, 30_000, 120_000], batchMax: 100, concurrency: 16 },
    },
    ratePerMinute: 1_000_000,
    initialBalance: 1_000_000_000,
    // Each message is a workflow that lingers after its outcome: a bounded cache keeps the worker's memory flat.
    maxCachedWorkflows: 1_000,
  });
  try {
    const audience = Array.from({ length: recipients }, (_, i) => `2348${String(100_000_000 + i)}`);
    const started = performance.now();
    const run = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: 'benchmark campaign',
      audience: { type: 'inline', recipients: audience },
    });
    // One progress query at a time, awaited before the stack closes: a query still retrying on a closed
    // connection would throw from its timer.
    let query: Promise<void> = Promise.resolve();
    const progress = setInterval(() => {
      query = query.then(() =>
        run.progress().then(
          (p) =>
            log(`${p.sent} sent, ${Object.values(p.counts).reduce((a, b) => a + (b ?? 0), 0)} final, run ${p.runs}`),
          () => {},
        ),
      );
    }, 15_000);
    const result = await run.result().finally(() => clearInterval(progress));
    await query;
    const seconds = (performance.now() - started) / 1000;
    const final = Object.values(result.counts).reduce((a, b) => a + (b ?? 0), 0);
    if (result.sent !== recipients || final !== recipients)
      throw new Error(`campaign ended with ${result.sent} sent and ${final} final of ${recipients}`);
    log(`campaign: ${recipients} messages final in ${round(seconds)} s; reading histories…`);

    const { events, tasks, workflows } = await historyTotals(stack.temporal, stack.taskQueue);
    await terminateRunning(stack.temporal, stack.taskQueue);
    return {
      seconds,
      perSecond: recipients / seconds,
      eventsPerMessage: events / recipients,
      tasksPerMessage: tasks / recipients,
      runs: result.runs,
      workflows,
    };
  } finally {
    await stack.close();
  }
}

/** History events and completed workflow tasks over every workflow run of the queue. */
async function historyTotals(
  client: Client,
  taskQueue: string,
): Promise<{ events: number; tasks: number; workflows: number }> {
  const executions: Array<{ workflowId: string; runId: string }> = [];
  for await (const info of client.workflow.list({ query: `TaskQueue = '${taskQueue}'`, pageSize: 1000 }))
    executions.push({ workflowId: info.workflowId, runId: info.runId });
  let events = 0;
  let tasks = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < executions.length) {
        const { workflowId, runId } = executions[next++]!;
        const history = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
        events += history.length;
        tasks += history.filter((e) => e.workflowTaskCompletedEventAttributes).length;
      }
    }),
  );
  return { events, tasks, workflows: executions.length };
}

/** The message workflows linger for minutes after their outcome: end them in one server-side batch. */
async function terminateRunning(client: Client, taskQueue: string): Promise<void> {
  await client.workflowService.startBatchOperation({
    namespace: client.options.namespace,
    jobId: `bench-cleanup-${randomUUID()}`,
    visibilityQuery: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
    reason: 'msgflow benchmark finished',
    terminationOperation: { identity: 'msgflow bench' },
  });
}

export interface CeilingFigures {
  seconds: number;
  perSecond: number;
  eventsPerWorkflow: number;
  tasksPerWorkflow: number;
}

/** N trivial workflows (one workflow task each) started with bounded concurrency, timed until the last result. */
export async function trivialCeiling({ temporal }: BenchContext, count: number): Promise<CeilingFigures> {
  const taskQueue = `bench-ceiling-${randomUUID()}`;
  const workerConnection = await NativeConnection.connect({ address: temporal.address });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: temporal.namespace });
  try {
    const worker = await Worker.create({
      connection: workerConnection,
      namespace: temporal.namespace,
      taskQueue,
      workflowBundle: await trivialBundle(),
    });
    return await worker.runUntil(async () => {
      const started = performance.now();
      let next = 0;
      const ids: string[] = [];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < count) {
            const n = next++;
            const handle = await client.workflow.start('trivialWorkflow', {
              workflowId: `${taskQueue}-${n}`,
              taskQueue,
              args: [n],
            });
            ids.push(handle.workflowId);
            if ((await handle.result()) !== n) throw new Error(`trivial workflow ${n} answered wrongly`);
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const sample = (await client.workflow.getHandle(ids[0]!).fetchHistory()).events ?? [];
      return {
        seconds,
        perSecond: count / seconds,
        eventsPerWorkflow: sample.length,
        tasksPerWorkflow: sample.filter((e) => e.workflowTaskCompletedEventAttributes).length,
      };
    });
  } finally {
    await connection.close();
    await workerConnection.close();
  }
}

let bundle: ReturnType<typeof bundleWorkflowCode> | undefined;
function trivialBundle(): ReturnType<typeof bundleWorkflowCode> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: TRIVIAL_WORKFLOWS_PATH,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m) => console.error(m) },
  });
  return bundle;
}
