/**
 * Campaign end-to-end beside the provider-only ceiling, for single-event and for batch webhook bodies.
 *
 * Ceiling: the sandbox alone sends the audience in chunks of 1,000 (as many in flight as a campaign keeps)
 * and delivers every final event to a bare HTTP receiver in this process; timed from the first send to the
 * last final event. Campaign: an `smsCampaign` of the same audience through msgflow as deployed, the
 * sandbox, the ingress and the worker each a process of its own (see campaign-target.ts), timed from its
 * start to its result (every message final). Also: Temporal history events and workflow tasks per message
 * over every workflow run the campaign caused, and the CPU time each process used. Each side first sends
 * a warm-up audience of its own through its whole path, untimed, so both are measured warm, as a
 * long-running deployment is (its code compiled by the JIT, its caches filled).
 */
import { type MessageStoreOptions, openMessageStore } from '../src/store/index.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type proto from '@temporalio/proto';
import type { createCampaignProviderActivities } from '../activities/campaign.js';
import type { CampaignResult } from '../src/api/campaign-io.js';
import { CAMPAIGN_DEFAULTS, isFinalStatus, MAX_RECIPIENTS_PER_REQUEST } from '../src/api/constants.js';
import { BATCH_EVENT_TYPE, type MessageStatusEvent } from '../src/api/events.js';
import { Msgflow } from '../src/starter/index.js';
import { CampaignReports } from '../src/starter/reports.js';
import { campaignKeyOf } from '../src/definitions/workflow-ids.js';
import { msgflowDataConverter } from '../src/temporal/data-converter.js';
import { startBareReceiver } from './bare-receiver.js';
import { type CampaignTarget, type Provider, targetFromEnv } from './campaign-target.js';
import { type Benchmark, type BenchContext, type BenchRow, eventTimeMs, round } from './harness.js';
import { sizeFromEnv } from './load.js';
import { measureCpu, peakMemoryMiB } from './processes.js';

type Mode = 'single' | 'batch';

const RECIPIENTS = sizeFromEnv('MSGFLOW_BENCH_CAMPAIGN_RECIPIENTS', 10_000);
const MODES = modesFromEnv(process.env.MSGFLOW_BENCH_CAMPAIGN_BODIES);
/** What the ceiling reaches on a quiet 2-core machine (messages/s); less says the machine was busy. */
const QUIET_CEILING: Record<Mode, number> = { single: 1_100, batch: 5_700 };
const MESSAGE = 'benchmark campaign';
/** A run that makes no progress for this long has failed (a lost event, a stuck worker). */
const STALL_MS = 120_000;
const PROGRESS_EVERY_MS = 15_000;
const HISTORY_PAGE_BYTES = 256 * 2 ** 20;

interface RunFigures {
  seconds: number;
  perSecond: number;
  /** CPU seconds each process used during the timed part. */
  cpu: Record<string, number | undefined>;
}

interface CampaignFigures extends RunFigures {
  eventsPerMessage: number;
  tasksPerMessage: number;
  /** Workflow tasks and signals of the campaign's workflow runs, counted. */
  tasks: number;
  /** Seconds from the campaign's start to each step of its history. */
  timeline: Timeline;
  signals: number;
  workflows: number;
  runs: number;
  /** Peak resident memory of each msgflow process (MiB), over its whole life. */
  peakMemory: Record<string, number | undefined>;
  storeBytes: number | undefined;
}

export const campaignBenchmark: Benchmark = {
  name: 'campaign',
  async run(context) {
    const target = targetFromEnv();
    const load = loadavg().map((l) => round(l, 1));
    const results: ModeResult[] = [];
    for (const mode of MODES) {
      const ceiling = await ceilingRun(context, target, RECIPIENTS, mode);
      context.log(`ceiling, ${mode}: ${RECIPIENTS} final events in ${round(ceiling.seconds)} s`);
      const campaign = await campaignRun(context, target, RECIPIENTS, mode);
      context.log(
        `campaign, ${mode}: ${RECIPIENTS} messages final in ${round(campaign.seconds)} s; ${resourcesNote(campaign)}`,
      );
      results.push({ mode, ceiling, campaign });
    }

    return {
      title: `Campaign vs the provider-only ceiling: ${RECIPIENTS} recipients, sandbox unlimited, zero carrier delay (target ${target.name})`,
      rows: results.flatMap((result) => [ceilingRow(result), campaignRow(result)]),
      notes: [
        `ratio = campaign messages/s ÷ the ceiling's of the same body kind, measured in this run (target ≥ 0.6×); the ceiling should not fall below ~1,100/s single, ~5,700/s batch on a quiet 2-core machine`,
        'CPU ms/msg: CPU time (user + system) each process used during the timed part ÷ the recipients; msgflow = ingress (its relay included) + Temporal server + worker; msgflow CPU ÷ sandbox compares it with the provider sandbox of the same run (targets ≤ 0.75× single-event, ≤ 1.1× batch)',
        `ceiling: the sandbox sends the audience in chunks of ${MAX_RECIPIENTS_PER_REQUEST}, ${CAMPAIGN_DEFAULTS.chunksInFlight} in flight, and delivers each final event to a bare Node HTTP receiver in the bench process; timed from the first send to the last final event`,
        'campaign: Msgflow.startCampaign with a file audience (one number per line, read by the worker in pages) → result, every message final; sandbox, `msgflow ingress` and `msgflow worker` each a process of its own, ingress and worker sharing one SQLite store file; Temporal dev server on this machine',
        `both sides first send ${WARMUP_RECIPIENTS} other recipients through their whole path, untimed: deployed services are warm (the worker builds its workflow sandbox on its first workflow task, and the JIT has compiled the hot code of both sides)`,
        `history events and workflow tasks are counted over every workflow run on the campaign's task queue, but for the warm-up's (${results.map(({ mode, campaign }) => `${mode}: ${campaign.runs} run(s)`).join(', ')}; continue-as-new makes new runs of the same workflow, not new workflows)`,
        ...results.flatMap(({ mode, ceiling, campaign }) => [
          cpuNote(`the ${mode} ceiling`, ceiling),
          cpuNote(`the ${mode} campaign`, campaign),
          `the ${mode} campaign: ${temporalNote(campaign)}`,
          `the ${mode} campaign's history, seconds from its start: ${timelineNote(campaign.timeline)}`,
          `the ${mode} campaign: ${resourcesNote(campaign)}`,
        ]),
        ...results
          .filter(({ mode, ceiling }) => ceiling.perSecond < QUIET_CEILING[mode])
          .map(
            ({ mode, ceiling }) =>
              `the ${mode} ceiling (${round(ceiling.perSecond)}/s) is below the ~${QUIET_CEILING[mode]}/s of a quiet 2-core machine: this machine was busy, so compare the ratios, not the absolute rates`,
          ),
        `machine load average when the run began (1, 5, 15 min): ${load.join(', ')}`,
        'MSGFLOW_BENCH_CAMPAIGN_RECIPIENTS sizes the run; MSGFLOW_BENCH_CAMPAIGN_BODIES picks the body kinds (default single,batch); MSGFLOW_BENCH_TARGET chooses where the parts run (default local)',
      ],
    };
  },
};

interface ModeResult {
  mode: Mode;
  ceiling: RunFigures;
  campaign: CampaignFigures;
}

const bodies = (mode: Mode) => (mode === 'single' ? 'single-event' : 'batch');

/** Waits until the message store holds no untold outcome. */
async function untilAllTold(options: MessageStoreOptions): Promise<void> {
  const store = await openMessageStore(options);
  try {
    while ((await store.outbox.backlog()).untold > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    await store.close();
  }
}

/** When the store recorded the campaign's first, middle and last final state (epoch ms), from its outcome feed. */
async function reportsRecordedAt(options: MessageStoreOptions, campaignKey: string): Promise<number[]> {
  const store = await openMessageStore(options);
  try {
    const times: number[] = [];
    // The campaign is over: the feed ends once it has read every outcome.
    for await (const row of new CampaignReports(store).outcomes(campaignKey, {
      done: Promise.resolve(),
      pollIntervalMs: 0,
    }))
      times.push(row.recordedAt);
    times.sort((a, b) => a - b);
    return times.length ? [times[0]!, times[Math.floor(times.length / 2)]!, times.at(-1)!] : [];
  } finally {
    await store.close();
  }
}

/** msgflow's parts, whose CPU per message is set beside the provider's. */
const MSGFLOW_PARTS = ['ingress', 'temporal', 'worker'] as const;

function ceilingRow({ mode, ceiling }: ModeResult): BenchRow {
  return {
    case: `ceiling, ${bodies(mode)} bodies`,
    seconds: round(ceiling.seconds),
    'messages/s': round(ceiling.perSecond),
    ratio: '(ceiling)',
    'history events/message': '',
    'workflow tasks/message': '',
    'workflows created': '',
    ...cpuColumns(ceiling.cpu.sandbox),
  };
}

function campaignRow({ mode, ceiling, campaign }: ModeResult): BenchRow {
  return {
    case: `campaign, ${bodies(mode)} bodies`,
    seconds: round(campaign.seconds),
    'messages/s': round(campaign.perSecond),
    ratio: `${round(campaign.perSecond / ceiling.perSecond, 2)}×`,
    'history events/message': round(campaign.eventsPerMessage, 3),
    'workflow tasks/message': round(campaign.tasksPerMessage, 3),
    'workflows created': campaign.workflows,
    ...cpuColumns(campaign.cpu.sandbox, campaign.cpu),
  };
}

/**
 * CPU milliseconds per message of the sandbox (the provider) and of each msgflow part that ran, and
 * msgflow's sum as a share of the sandbox's in the same run.
 */
function cpuColumns(
  sandboxSeconds: number | undefined,
  msgflowSeconds: Record<string, number | undefined> = {},
): Omit<BenchRow, 'case'> {
  const perMessage = (seconds: number | undefined) => (seconds === undefined ? NaN : (seconds * 1000) / RECIPIENTS);
  const shown = (ms: number) => (Number.isNaN(ms) ? '' : round(ms, 3));
  const sandbox = perMessage(sandboxSeconds);
  const msgflowParts = MSGFLOW_PARTS.map((part) => perMessage(msgflowSeconds[part]));
  // NaN when a part did not run here (the ceiling) or /proc could not tell.
  const msgflow = msgflowParts.reduce((sum, ms) => sum + ms, 0);
  return {
    'sandbox CPU ms/msg': shown(sandbox),
    ...Object.fromEntries(MSGFLOW_PARTS.map((part, i) => [`${part} CPU ms/msg`, shown(msgflowParts[i]!)])),
    'msgflow CPU ms/msg': shown(msgflow),
    'msgflow CPU ÷ sandbox': Number.isNaN(msgflow / sandbox) ? '' : `${round(msgflow / sandbox, 2)}×`,
  };
}

function cpuNote(name: string, { cpu, seconds }: RunFigures): string {
  const used = Object.entries(cpu).map(([process, s]) => `${process} ${s === undefined ? '?' : round(s)}`);
  return `CPU seconds during ${name} (${round(seconds)} s wall): ${used.join(', ')}`;
}

/**
 * What the Temporal server's CPU bought: nearly all of it goes to workflow tasks (each one persisted,
 * matched to a poller, started and completed) and to the signals that cause most of them.
 */
function temporalNote({ signals, tasks, cpu, seconds }: CampaignFigures): string {
  const perTask = cpu.temporal === undefined || tasks === 0 ? '?' : `${round((cpu.temporal * 1000) / tasks, 1)} ms`;
  const outcomesPerSignal = signals === 0 ? '?' : round(RECIPIENTS / signals, 1);
  const perSecond = seconds > 0 ? round(signals / seconds, 2) : '?';
  return `${signals} signals (${outcomesPerSignal} outcomes each; ${perSecond}/s over its ${round(seconds)} s, the relay allows 2/s per workflow, plus one with its last outcomes), ${tasks} workflow tasks; Temporal server CPU ÷ workflow tasks ${perTask} (the signals' and activities' share included)`;
}

function timelineNote({ firstSend, lastSendAnswered, reportsRecorded, signals, completed }: Timeline): string {
  const at = (seconds: number | undefined) => (seconds === undefined ? '?' : round(seconds, 2));
  return `first send ${at(firstSend)} (the pre-flight before it), last send answered ${at(lastSendAnswered)}, reports recorded (first, half, last) ${reportsRecorded.map(at).join(', ') || '?'}, signals at ${signals.map(at).join(', ') || 'none'}, completed ${at(completed)}`;
}

function resourcesNote({ peakMemory, storeBytes }: CampaignFigures): string {
  const memory = Object.entries(peakMemory).map(
    ([process, mib]) => `${process} ${mib === undefined ? '?' : Math.round(mib)} MiB`,
  );
  const store = storeBytes === undefined ? '?' : `${round(storeBytes / 2 ** 20, 1)} MiB`;
  return `peak resident memory ${memory.join(', ')}; message store on disk afterwards ${store}`;
}

function modesFromEnv(value: string | undefined): Mode[] {
  const modes = (value || 'single,batch').split(',').map((m) => m.trim());
  const unknown = modes.filter((m) => m !== 'single' && m !== 'batch');
  if (unknown.length || !modes.length)
    throw new Error(`MSGFLOW_BENCH_CAMPAIGN_BODIES=${value}: expected single, batch or single,batch`);
  return modes as Mode[];
}

const WARMUP_RECIPIENTS = 1_000;
/** 2347031000000, 2347031000001, …: valid numbers outside the audience below, delivered like it. */
const WARMUP_AUDIENCE = Array.from({ length: WARMUP_RECIPIENTS }, (_, i) => `234703${1_000_000 + i}`);

/** 2348100000000, 2348100000001, …: valid numbers, each delivered by the sandbox's carrier. */
function audienceOf(recipients: number): string[] {
  return Array.from({ length: recipients }, (_, i) => `2348${String(100_000_000 + i)}`);
}

async function ceilingRun(context: BenchContext, target: CampaignTarget, recipients: number, mode: Mode) {
  const provider = await target.startProvider(context);
  const final = new Set<string>();
  let lastFinalAt = 0;
  const receiver = await startBareReceiver((raw) => {
    const body = JSON.parse(raw) as MessageStatusEvent | { type: string; events: MessageStatusEvent[] };
    const events = 'type' in body && body.type === BATCH_EVENT_TYPE ? body.events : [body as MessageStatusEvent];
    for (const event of events) if (isFinalStatus(event.status)) final.add(event.provider_message_id);
    lastFinalAt = performance.now();
  });
  try {
    await provider.registerWebhook(receiver.url, mode === 'batch');
    const audience = audienceOf(recipients);
    const chunks = Array.from({ length: Math.ceil(recipients / MAX_RECIPIENTS_PER_REQUEST) }, (_, i) =>
      audience.slice(i * MAX_RECIPIENTS_PER_REQUEST, (i + 1) * MAX_RECIPIENTS_PER_REQUEST),
    );
    // Warm-up, as for the campaign: one message through the whole path before the clock starts.
    await sendChunks(provider, [WARMUP_AUDIENCE]);
    await until(`ceiling warm-up (${mode})`, () => final.size, WARMUP_RECIPIENTS, context.log);
    final.clear();
    const { result: seconds, cpu } = await measureCpu(pidsOf(context, provider), async () => {
      const started = performance.now();
      await sendChunks(provider, chunks);
      await until(`ceiling (${mode})`, () => final.size, recipients, context.log);
      return (lastFinalAt - started) / 1000;
    });
    return { seconds, perSecond: recipients / seconds, cpu };
  } finally {
    await receiver.close();
    await provider.close();
  }
}

/** Sends every chunk with the provider client, as many in flight at once as a campaign keeps. */
async function sendChunks(provider: Provider, chunks: string[][]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CAMPAIGN_DEFAULTS.chunksInFlight }, async () => {
      while (next < chunks.length) {
        const recipients = chunks[next++]!;
        await provider.messaging.sms.send({ recipients, sender: 'ACME', message: MESSAGE });
      }
    }),
  );
}

async function campaignRun(
  context: BenchContext,
  target: CampaignTarget,
  recipients: number,
  mode: Mode,
): Promise<CampaignFigures> {
  const { temporal, log } = context;
  const provider = await target.startProvider(context);
  // A page of a big campaign's history (signals of up to 2,000 outcomes each) can exceed gRPC's default 4 MiB.
  const connection = await Connection.connect({
    address: temporal.address,
    channelArgs: { 'grpc.max_receive_message_length': HISTORY_PAGE_BYTES },
  });
  const audienceDir = mkdtempSync(join(tmpdir(), 'msgflow-bench-audience-'));
  const audienceFile = join(audienceDir, 'audience.txt');
  writeFileSync(audienceFile, `${audienceOf(recipients).join('\n')}\n`);
  const warmupFile = join(audienceDir, 'warm-up.txt');
  writeFileSync(warmupFile, `${WARMUP_AUDIENCE.join('\n')}\n`);
  let msgflow: Awaited<ReturnType<CampaignTarget['startMsgflow']>> | undefined;
  try {
    msgflow = await target.startMsgflow(context, provider, { batch: mode === 'batch' });
    const client = new Client({ connection, namespace: temporal.namespace, dataConverter: msgflowDataConverter() });
    const facade = new Msgflow(client, msgflow.taskQueue);
    const pids = { ...pidsOf(context, provider), ...msgflow.pids };
    // Warm-up: deployed services are long-running, so the first workflow task (the worker builds its
    // workflow sandbox then), the first signals and store writes, and code the JIT has not compiled yet are
    // not part of the measure. The same path as the measured campaign, on other recipients.
    const warmup = await facade.startCampaign({
      sender: 'ACME',
      message: MESSAGE,
      audience: { type: 'file', path: warmupFile, format: 'txt' },
    });
    await warmup.result();
    const { result: timed, cpu } = await measureCpu(pids, async () => {
      const started = performance.now();
      const run = await facade.startCampaign({
        sender: 'ACME',
        message: MESSAGE,
        audience: { type: 'file', path: audienceFile, format: 'txt' },
      });
      const result = await followCampaign(run, log);
      // The campaign completed once it heard every outcome; the clock stops once the relay marked them told.
      await untilAllTold(msgflow!.store);
      return { seconds: (performance.now() - started) / 1000, result, workflowId: run.workflowId };
    });
    const { result, seconds } = timed;
    log(`campaign (${mode}) finished in ${round(seconds)} s; counting its history`);
    const final = Object.entries(result.counts)
      .filter(([status]) => isFinalStatus(status))
      .reduce((sum, [, n]) => sum + n, 0);
    if (result.sent !== recipients || final !== recipients)
      throw new Error(`campaign (${mode}) ended with ${result.sent} sent and ${final} final of ${recipients}`);
    const peakMemory = Object.fromEntries(
      Object.entries(msgflow.pids).map(([process, pid]) => [process, peakMemoryMiB(pid)]),
    );
    const storeBytes = await msgflow.storeBytes();
    const history = await historyTotals(client, msgflow.taskQueue, timed.workflowId, result.runs, warmup.workflowId);
    const recorded = await reportsRecordedAt(msgflow.store, campaignKeyOf(timed.workflowId));
    return {
      seconds,
      perSecond: recipients / seconds,
      eventsPerMessage: history.events / recipients,
      tasksPerMessage: history.tasks / recipients,
      tasks: history.tasks,
      timeline: { ...history.timeline, reportsRecorded: recorded.map((at) => (at - history.startedAt) / 1000) },
      signals: history.signals,
      workflows: history.workflows,
      runs: history.runs,
      cpu,
      peakMemory,
      storeBytes,
    };
  } finally {
    await msgflow?.close();
    await provider.close();
    await connection.close();
    rmSync(audienceDir, { recursive: true, force: true });
  }
}

/** The campaign's result, with its progress logged now and then. */
async function followCampaign(
  run: Awaited<ReturnType<Msgflow['startCampaign']>>,
  log: (line: string) => void,
): Promise<CampaignResult> {
  // One progress query at a time, awaited before returning: a query still retrying on a closed connection
  // would throw from its timer.
  let query: Promise<void> = Promise.resolve();
  const progress = setInterval(() => {
    query = query.then(() =>
      run.progress().then(
        (p) =>
          log(
            `${p.phase}: ${p.sent} sent, ${Object.values(p.counts).reduce((a, b) => a + b, 0)} counted, run ${p.runs}`,
          ),
        () => {},
      ),
    );
  }, PROGRESS_EVERY_MS);
  try {
    return await run.result();
  } finally {
    clearInterval(progress);
    await query;
  }
}

/** Resolves once `count()` reaches `total`; fails when it stops moving for STALL_MS. */
async function until(what: string, count: () => number, total: number, log: (line: string) => void): Promise<void> {
  let last = -1;
  let movedAt = performance.now();
  let loggedAt = performance.now();
  while (count() < total) {
    const now = performance.now();
    if (count() !== last) [last, movedAt] = [count(), now];
    if (now - movedAt > STALL_MS) throw new Error(`${what}: stuck at ${last} of ${total} for ${STALL_MS / 1000} s`);
    if (now - loggedAt > PROGRESS_EVERY_MS) {
      log(`${what}: ${last} of ${total}`);
      loggedAt = now;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function pidsOf(context: BenchContext, provider: Provider): Record<string, number | undefined> {
  return { ...provider.pids, bench: process.pid, temporal: context.temporal.pid };
}

/**
 * History events and completed workflow tasks over every workflow run of the queue. Visibility lags a
 * little behind: the list is read again until it holds every run of the campaign.
 */
async function historyTotals(
  client: Client,
  taskQueue: string,
  campaignWorkflowId: string,
  campaignRuns: number,
  warmupWorkflowId: string,
): Promise<{
  events: number;
  tasks: number;
  signals: number;
  workflows: number;
  runs: number;
  startedAt: number;
  timeline: Omit<Timeline, 'reportsRecorded'>;
}> {
  let executions: Array<{ workflowId: string; runId: string }> = [];
  for (let attempt = 0; attempt < 40; attempt++) {
    executions = [];
    for await (const info of client.workflow.list({ query: `TaskQueue = '${taskQueue}'`, pageSize: 1000 }))
      if (info.workflowId !== warmupWorkflowId) executions.push({ workflowId: info.workflowId, runId: info.runId });
    if (executions.filter((e) => e.workflowId === campaignWorkflowId).length >= campaignRuns) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  let events = 0;
  let tasks = 0;
  let signals = 0;
  const campaignEvents: HistoryEvent[] = [];
  for (const { workflowId, runId } of executions) {
    const history = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    if (workflowId === campaignWorkflowId) campaignEvents.push(...history);
    events += history.length;
    tasks += history.filter((e) => e.workflowTaskCompletedEventAttributes).length;
    signals += history.filter((e) => e.workflowExecutionSignaledEventAttributes).length;
  }
  return {
    events,
    tasks,
    signals,
    workflows: new Set(executions.map((e) => e.workflowId)).size,
    runs: executions.length,
    ...timelineOf(campaignEvents),
  };
}

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** The activity that sends one chunk of the campaign to the provider. */
const SEND_ACTIVITY: keyof ReturnType<typeof createCampaignProviderActivities> = 'sendCampaignChunk';

interface Timeline {
  firstSend?: number;
  lastSendAnswered?: number;
  /** When the store recorded the first, the middle and the last report. */
  reportsRecorded: number[];
  signals: number[];
  completed?: number;
}

/** Where the campaign's time went, from its runs' history events (in order, runs one after another). */
function timelineOf(unordered: HistoryEvent[]): { startedAt: number; timeline: Omit<Timeline, 'reportsRecorded'> } {
  const events = [...unordered].sort((a, b) => eventTimeMs(a) - eventTimeMs(b));
  const start = events.find((e) => e.workflowExecutionStartedEventAttributes);
  if (!start) return { startedAt: NaN, timeline: { signals: [] } };
  const since = (e: HistoryEvent | undefined) => (e ? (eventTimeMs(e) - eventTimeMs(start)) / 1000 : undefined);
  const sends = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === SEND_ACTIVITY);
  const sendIds = new Set(sends.map((e) => String(e.eventId)));
  const answered = events.filter(
    (e) =>
      e.activityTaskCompletedEventAttributes &&
      sendIds.has(String(e.activityTaskCompletedEventAttributes.scheduledEventId)),
  );
  return {
    startedAt: eventTimeMs(start),
    timeline: {
      firstSend: since(sends[0]),
      lastSendAnswered: since(answered.at(-1)),
      signals: events.filter((e) => e.workflowExecutionSignaledEventAttributes).map((e) => since(e)!),
      completed: since(events.findLast((e) => e.workflowExecutionCompletedEventAttributes)),
    },
  };
}
