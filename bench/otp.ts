/**
 * OTP latency through the facade: `sendOtp` (update-with-start, answered once the provider took the code)
 * and `verifyOtp` (one update, answered synchronously), beside the bare provider calls (`otp.send` and
 * `otp.verify` with the client) measured in the same run against the same sandbox. The worker runs in a
 * process of its own, as deployed. Reading the code from the sandbox inbox sits between the two and is not
 * timed. A third path, the floor, is the same two round trips through a workflow with nothing of msgflow in it
 * (bench/floor): what Temporal itself costs here. The paths alternate, so noise hits all. Where the time goes
 * is read from every session's timeline (the client's marks and the history's event times): the median of
 * each step (client → server → workflow task → activity → answer), the facade beside the floor.
 *
 * The Nexus path: another team's workflow, in a namespace of its own, calling msgflow's `sendOtp` and
 * `verifyOtp` through an endpoint, one caller workflow run per call, timed by the caller's client from the
 * run's start to its result. Its floor is the same caller workflow calling an empty Nexus operation (answering
 * its input) served by the floor's worker in msgflow's namespace: the goal is its send p50 at most
 * NEXUS_GOAL × (that floor + the bare provider call). Its steps come from the caller workflows' histories.
 */
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import proto from '@temporalio/proto';
import { DEFAULTS } from '../src/sandbox/options.js';
import { type Benchmark, type BenchRow, eventTimeMs, percentile, round } from './harness.js';
import { spreadNumbers } from './numbers.js';
import { callUpdate, type FloorActivityMode, floorRoundTrip } from './floor/workflow.js';
import { startOtpBenchStack } from './otp-worker.js';
import { startService } from './processes.js';
import { type BenchCallers, startBenchCallers } from './nexus/callers.js';
import { EMPTY_SERVICE_NAME, floorNexusQueue } from './nexus/empty-service.js';

const WARMUP = Number(process.env.MSGFLOW_BENCH_OTP_WARMUP ?? 10);
const ITERATIONS = Number(process.env.MSGFLOW_BENCH_OTP_ITERATIONS ?? 200);
const FLOOR_WORKER = fileURLToPath(new URL('./floor/worker.ts', import.meta.url));
/** What a person waiting on a code may lose to msgflow at most (the facade minus the bare calls), in ms. */
const OVERHEAD_GOAL = { p50: 30, p99: 60 } as const;
/** The Nexus path's send p50 at most this many times (its floor + the bare call), at p50. */
const NEXUS_GOAL = 1.15;

interface Timings {
  send: number[];
  verify: number[];
  total: number[];
}

export const otpBenchmark: Benchmark = {
  name: 'otp',
  async run({ temporal, log }) {
    const taskQueue = `bench-otp-${randomUUID()}`;
    const bench = await startOtpBenchStack(
      { temporal, log },
      {
        taskQueue,
        // Provider timings are the sandbox's defaults; only the per-IP OTP limit is lifted (every request is local).
        sandbox: { port: 0, db: ':memory:', otpPerIpPerMinute: 1_000_000, log: () => {} },
        ratePerMinute: 600_000,
        initialBalance: 100_000_000,
      },
      // The worker serves msgflow's Nexus service too, as a deployment calling it through Nexus runs it.
      { MSGFLOW_NEXUS: 'true' },
    );
    const { stack } = bench;
    const floorQueue = `bench-otp-floor-${randomUUID()}`;
    const floorWorker = await startService('floor-worker', FLOOR_WORKER, [floorQueue], {
      cwd: tmpdir(),
      env: { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace },
      ready: /floor worker running/,
    }).catch(async (error: unknown) => {
      await bench.close();
      throw error;
    });
    let callers: BenchCallers;
    try {
      callers = await startBenchCallers(temporal.address, {
        msgflow: { namespace: temporal.namespace, taskQueue },
        empty: { namespace: temporal.namespace, taskQueue: floorNexusQueue(floorQueue) },
      });
    } catch (error) {
      await floorWorker.stop();
      await bench.close();
      throw error;
    }
    // A session of its own for the Nexus path: the second half of the numbers.
    const numbers = spreadNumbers(2 * (WARMUP + ITERATIONS));
    const recipients = numbers.slice(0, WARMUP + ITERATIONS);
    const nexusRecipients = numbers.slice(WARMUP + ITERATIONS);
    const codeOf = async (recipient: string) => (await stack.admin.inbox(recipient))[0]!.text.match(/\d{6}/)![0];
    const facade: Timings = { send: [], verify: [], total: [] };
    const bare: Timings = { send: [], verify: [], total: [] };
    const floor: Record<FloorActivityMode, Timings> = {
      queued: { send: [], verify: [], total: [] },
      local: { send: [], verify: [], total: [] },
    };
    const nexus: Timings = { send: [], verify: [], total: [] };
    const nexusFloor: Timings = { send: [], verify: [], total: [] };
    // Timelines of the kept sessions: the facade's, and the floor's with a local activity (the facade's shape);
    // the Nexus path's caller workflows (one per call), and its floor's.
    const timelines: Record<'facade' | 'floor', Timeline[]> = { facade: [], floor: [] };
    const nexusTimelines: Record<'nexus' | 'nexusFloor', Record<'send' | 'verify', Timeline[]>> = {
      nexus: { send: [], verify: [] },
      nexusFloor: { send: [], verify: [] },
    };
    let steps: string[];
    let nexusSteps: string[];

    try {
      for (const [i, recipient] of recipients.entries()) {
        const keep = i >= WARMUP;
        // Through msgflow: one OTP session per recipient.
        const marks: Mark[] = [];
        const send = await markedCall(marks, 'send', () => stack.msgflow.sendOtp({ purpose: 'bench', recipient }));
        let code = await codeOf(recipient);
        const verify = await markedCall(marks, 'verify', () =>
          stack.msgflow.verifyOtp({ purpose: 'bench', recipient, code }),
        );
        if (verify.result.status !== 'verified') throw new Error(`facade verify answered ${verify.result.status}`);
        if (keep) {
          record(facade, send.ms, verify.ms);
          timelines.facade.push({ workflowId: send.result.workflowId, marks });
        }

        // The ceiling: the same two provider calls, straight from the client.
        let t0 = performance.now();
        const otp = await stack.messaging.otp.send({ recipient }, { idempotencyKey: randomUUID() });
        const sent = performance.now() - t0;
        code = await codeOf(recipient);
        t0 = performance.now();
        const checked = await stack.messaging.otp.verify({ otp_id: otp.otp_id, code });
        const verified = performance.now() - t0;
        if (checked.status !== 'verified') throw new Error(`bare verify answered ${checked.status}`);
        if (keep) record(bare, sent, verified);

        // The floor: the same two round trips with a no-op activity, queued and local.
        for (const mode of ['queued', 'local'] as const) {
          const session = await floorRoundTrips(stack.temporal, floorQueue, mode);
          if (!keep) continue;
          record(floor[mode], session.sent, session.verified);
          if (mode === 'local') timelines.floor.push(session.timeline);
        }

        // Through Nexus: a caller workflow per call, to msgflow's service, then to the empty one.
        const nexusRecipient = nexusRecipients[i]!;
        const viaNexus = await nexusSession(callers, callers.endpoints.msgflow, 'msgflow', nexusRecipient, () =>
          codeOf(nexusRecipient),
        );
        const nexusVerified = (viaNexus.verifyResult as { status?: string }).status;
        if (nexusVerified !== 'verified') throw new Error(`Nexus verifyOtp answered ${nexusVerified}`);
        const viaEmpty = await nexusSession(callers, callers.endpoints.empty, EMPTY_SERVICE_NAME, nexusRecipient, () =>
          Promise.resolve(code),
        );
        if (keep) {
          record(nexus, viaNexus.sent, viaNexus.verified);
          record(nexusFloor, viaEmpty.sent, viaEmpty.verified);
          for (const call of ['send', 'verify'] as const) {
            nexusTimelines.nexus[call].push(viaNexus.timelines[call]);
            nexusTimelines.nexusFloor[call].push(viaEmpty.timelines[call]);
          }
        }

        if ((i + 1) % 50 === 0) log(`${i + 1}/${recipients.length}`);
      }
      steps = await medianSteps(stack.temporal, timelines.facade, timelines.floor);
      // A caller workflow makes one call: the send's and the verification's steps are told apart by name.
      nexusSteps = [];
      for (const call of ['send', 'verify'] as const)
        nexusSteps.push(
          ...(await medianSteps(callers.client, nexusTimelines.nexus[call], nexusTimelines.nexusFloor[call])).map(
            (line) => line.replace(/ {2}/, `  ${call}: `),
          ),
        );
    } finally {
      await callers.close();
      await floorWorker.stop();
      await bench.close();
    }
    // What msgflow adds to a login: the facade's figure minus the bare call's, at the same percentile.
    const overhead = (step: 'send' | 'verify', p: number) => percentile(facade[step], p) - percentile(bare[step], p);
    // The facade's provider calls are local activities: its floor is the local one.
    const floorP50 = { send: percentile(floor.local.send, 50), verify: percentile(floor.local.verify, 50) };
    // The Nexus path against its floor plus the bare call, at p50.
    const nexusRatioOf = (step: 'send' | 'verify') =>
      percentile(nexus[step], 50) / (percentile(nexusFloor[step], 50) + percentile(bare[step], 50));
    const nexusRatio = (step: 'send' | 'verify') =>
      `${step} p50 ${round(percentile(nexus[step], 50))} vs ${round(percentile(nexusFloor[step], 50) + percentile(bare[step], 50))} (floor ${round(percentile(nexusFloor[step], 50))} + bare ${round(percentile(bare[step], 50))}) = ${nexusRatioOf(step).toFixed(2)}×`;
    // msgflow's handler runs the facade, itself a Temporal round trip: two yardsticks that count it.
    const nexusAtop = (step: 'send' | 'verify') => {
      const p50 = (t: number[]) => percentile(t, 50);
      const atopFacade = p50(nexus[step]) / (p50(nexusFloor[step]) + p50(facade[step]));
      const twoFloors = p50(nexus[step]) / (p50(nexusFloor[step]) + p50(floor.local[step]) + p50(bare[step]));
      return `${step} ${atopFacade.toFixed(2)}× (nexus floor + facade), ${twoFloors.toFixed(2)}× (nexus floor + local floor + bare)`;
    };

    return {
      title: `OTP send → verify latency, ms (${ITERATIONS} sessions after ${WARMUP} warm-up, sequential)`,
      rows: [
        row('facade: sendOtp + verifyOtp (Temporal)', facade),
        row('ceiling: client otp.send + otp.verify', bare),
        row('floor: the same round trips, no-op activity on a sibling queue', floor.queued),
        row('floor: the same round trips, no-op local activity', floor.local),
        row('nexus: a caller workflow calling sendOtp, another verifyOtp (another namespace)', nexus),
        row('nexus floor: the same caller workflows calling an empty operation', nexusFloor),
      ],
      notes: [
        `overhead (facade − ceiling): send ${round(overhead('send', 50))} at p50, ${round(overhead('send', 99))} at p99; verify ${round(overhead('verify', 50))} at p50, ${round(overhead('verify', 99))} at p99 (goal: at most ${OVERHEAD_GOAL.p50} at p50, ${OVERHEAD_GOAL.p99} at p99)`,
        `of the p50 overhead, Temporal's round trips (floor, local activity) are send ${round(floorP50.send)}, verify ${round(floorP50.verify)}; msgflow's own share is send ${round(overhead('send', 50) - floorP50.send)}, verify ${round(overhead('verify', 50) - floorP50.verify)}`,
        'total = send + verify of one session; the inbox read between them is not timed',
        'floor = update-with-start, then one update, each answered by a no-op activity (bench/floor, its worker a process of its own); no provider call, no payload codec, no rate limit',
        'facade send = update-with-start answered after the provider accepted the code (one workflow task making the call as a local activity, after the request budget)',
        'facade verify = one update: validator, FIFO lock, local activity that opens the sealed code and calls the provider',
        `sandbox at its default timings (send latency ${DEFAULTS.sendLatencyMs} ms); Temporal dev server on this machine; \`msgflow worker\` in a process of its own`,
        `where the time goes: the median of each step over the ${ITERATIONS} sessions, facade | floor (local activity), ms (client clock and history event times, same machine; — where the floor has no such step):`,
        ...steps,
        `nexus (the caller's client, from starting its workflow to its result): ${nexusRatio('send')} (goal: at most ${NEXUS_GOAL}× for the send: ${nexusRatioOf('send') <= NEXUS_GOAL ? 'met' : 'missed'}); ${nexusRatio('verify')}`,
        `nexus against yardsticks that count the facade's own round trip inside msgflow's handler, p50: ${nexusAtop('send')}; ${nexusAtop('verify')}`,
        'nexus = a caller workflow in a namespace of its own (default converter, its worker a process of its own) making one Nexus call through an endpoint to msgflow’s queue; msgflow’s Nexus worker (in `msgflow worker`) calls the facade',
        'nexus floor = the same caller workflow calling an operation that answers its input, served in msgflow’s namespace by the floor’s worker; no msgflow, no provider call',
        `where the time goes on the Nexus path: the median of each step of the caller workflows (client marks and the caller's history), nexus | nexus floor, ms:`,
        ...nexusSteps,
      ],
    };
  },
};

/** One floor session: its update-with-start and its update, timed and marked as the facade's send and verify. */
async function floorRoundTrips(
  client: Client,
  taskQueue: string,
  mode: FloorActivityMode,
): Promise<{ sent: number; verified: number; timeline: Timeline }> {
  const workflowId = `bench-floor-${randomUUID()}`;
  const startWorkflowOperation = new WithStartWorkflowOperation(floorRoundTrip, {
    workflowId,
    taskQueue,
    args: [mode],
    workflowIdConflictPolicy: 'FAIL',
  });
  const marks: Mark[] = [];
  const send = await markedCall(marks, 'send', () =>
    client.workflow.executeUpdateWithStart(callUpdate, { args: ['send'], startWorkflowOperation }),
  );
  const handle = await startWorkflowOperation.workflowHandle();
  const verify = await markedCall(marks, 'verify', () => handle.executeUpdate(callUpdate, { args: ['verify'] }));
  return { sent: send.ms, verified: verify.ms, timeline: { workflowId, marks } };
}

/** One OTP session through a Nexus endpoint: a caller workflow for the send, another for the verification. */
async function nexusSession(
  callers: BenchCallers,
  endpoint: string,
  service: string,
  recipient: string,
  codeOf: () => Promise<string>,
): Promise<{ sent: number; verified: number; verifyResult: unknown; timelines: Record<'send' | 'verify', Timeline> }> {
  const call = async (name: 'send' | 'verify', operation: string, input: unknown) => {
    const marks: Mark[] = [];
    const called = await markedCall(marks, name, () => callers.call({ endpoint, service, operation, input }));
    return { ms: called.ms, result: called.result.result, timeline: { workflowId: called.result.workflowId, marks } };
  };
  const send = await call('send', 'sendOtp', { purpose: 'bench', recipient });
  const code = await codeOf();
  const verify = await call('verify', 'verifyOtp', { purpose: 'bench', recipient, code });
  return {
    sent: send.ms,
    verified: verify.ms,
    verifyResult: verify.result,
    timelines: { send: send.timeline, verify: verify.timeline },
  };
}

/** One call of a session, marked on its timeline when called and when answered: its result and its time in ms. */
async function markedCall<T>(
  marks: Mark[],
  name: 'send' | 'verify',
  call: () => Promise<T>,
): Promise<{ result: T; ms: number }> {
  const called = mark(`client: ${name} called`);
  marks.push(called);
  const result = await call();
  const answered = mark(`client: ${name} answered`);
  marks.push(answered);
  return { result, ms: answered.at - called.at };
}

function record(timings: Timings, send: number, verify: number): void {
  timings.send.push(send);
  timings.verify.push(verify);
  timings.total.push(send + verify);
}

function row(name: string, t: Timings): BenchRow {
  return {
    case: name,
    'send p50': round(percentile(t.send, 50)),
    'send p99': round(percentile(t.send, 99)),
    'verify p50': round(percentile(t.verify, 50)),
    'verify p99': round(percentile(t.verify, 99)),
    'total p50': round(percentile(t.total, 50)),
    'total p99': round(percentile(t.total, 99)),
  };
}

/** Distinct valid Nigerian mobile numbers, so every session is new. */

interface Mark {
  at: number;
  what: string;
}

/** One session: its workflow, and the client's marks around its two calls. */
interface Timeline {
  workflowId: string;
  marks: Mark[];
}

/** Wall-clock time with sub-millisecond precision, comparable with the server's event times on this machine. */
const mark = (what: string): Mark => ({ at: performance.timeOrigin + performance.now(), what });

/**
 * The median of each step of the sessions, the facade's beside the floor's, as lines `facade | floor  step`. A
 * step is the time from one point of a session's timeline (a client mark or a history event) to the next; the
 * n-th occurrence of the same pair is the same step in every session, so the two paths line up step by step.
 */
async function medianSteps(client: Client, measured: Timeline[], floorTimelines: Timeline[]): Promise<string[]> {
  const [facade, floor] = await Promise.all([stepDurations(client, measured), stepDurations(client, floorTimelines)]);
  const cell = (durations: number[] | undefined) => (durations ? round(percentile(durations, 50)).toFixed(1) : '—');
  return [...facade.keys()].map((step) => `${cell(facade.get(step))} | ${cell(floor.get(step))}  ${step}`);
}

const BETWEEN_THE_CALLS = 'client: send answered → client: verify called';

/** Every session's steps, by name in the order of the first session: their durations across the sessions. */
async function stepDurations(client: Client, timelines: Timeline[]): Promise<Map<string, number[]>> {
  const steps = new Map<string, number[]>();
  for (const { workflowId, marks } of timelines) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const events: Mark[] = (history.events ?? []).map((event) => ({
      at: eventTimeMs(event),
      what: `server: ${eventName(event.eventType)}`,
    }));
    const points = [...marks, ...events].sort((a, b) => a.at - b.at);
    const seen = new Map<string, number>();
    for (let k = 1; k < points.length; k++) {
      const pair = `${points[k - 1]!.what} → ${points[k]!.what}`;
      if (pair === BETWEEN_THE_CALLS) continue; // the inbox read, not timed
      const occurrence = (seen.get(pair) ?? 0) + 1;
      seen.set(pair, occurrence);
      const step = occurrence === 1 ? pair : `${pair} (${occurrence})`;
      const durations = steps.get(step) ?? [];
      durations.push(points[k]!.at - points[k - 1]!.at);
      steps.set(step, durations);
    }
  }
  return steps;
}

function eventName(type: proto.temporal.api.enums.v1.EventType | null | undefined): string {
  const name = proto.temporal.api.enums.v1.EventType[type ?? 0] ?? String(type);
  return name.replace(/^EVENT_TYPE_/, '');
}
