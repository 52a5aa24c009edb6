/**
 * Teams by Nexus endpoint at the sandbox's real limit (120 requests/minute): two teams, clinic:3 and
 * marketing:1, each with an endpoint of its own targeting its team's queue on msgflow's worker. A caller
 * namespace of its own runs one workflow per team that starts that team's campaign through its endpoint (the
 * campaign input names no team: the endpoint decides it). Each team's requests are counted as the fairness
 * bench counts them, from the sandbox's ledger (its campaign's charged sends, one recipient each) over a window
 * after a short settling: first with logins every few seconds beside the campaigns (the fairness bench's
 * load), then with the campaigns alone on the token.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { addNexusEndpoint, ensureNamespace } from '../src/temporal/nexus-endpoints.js';
import { NativeConnection, Worker } from '@temporalio/worker';
import { nexusTeamsOf } from '../src/api/nexus-teams.js';
import { weightOf } from '../src/api/team-weights.js';
import { generateKey } from '../src/crypto/keyring.js';
import { type RunningStack, startStack } from '../src/stack.js';
import { campaignWorkflowId } from '../src/definitions/workflow-ids.js';
import type { runCampaignThrough } from './nexus/caller-workflows.js';
import { type Benchmark, type BenchRow, round } from './harness.js';
import { numbersStartingWith, spreadNumbers } from './numbers.js';
import { login, loginsUntil } from './fairness.js';

const LIMIT_PER_MINUTE = 120;
const SETTLE_SECONDS = Number(process.env.MSGFLOW_BENCH_FAIRNESS_SETTLE_S ?? 10);
const WINDOW_SECONDS = Number(process.env.MSGFLOW_BENCH_FAIRNESS_WINDOW_S ?? 60);
const LOGIN_INTERVAL_MS = 5_000;
/** Each campaign's chunk sends in flight (the fairness bench's 16 by default). */
const CHUNKS_IN_FLIGHT = Number(process.env.MSGFLOW_BENCH_NEXUS_CHUNKS_IN_FLIGHT ?? 16);
/** A share within this much of its weight's share, relative. */
const SHARE_TOLERANCE = 0.1;
const WEIGHTS = { clinic: 3, marketing: 1 };
const TEAMS = [
  { team: 'clinic', sender: 'CLINIC', prefix: '2348053' },
  { team: 'marketing', sender: 'PROMO', prefix: '2348054' },
] as const;
const CALLER_WORKFLOWS = fileURLToPath(new URL('./nexus/caller-workflows.ts', import.meta.url));

export const nexusFairnessBenchmark: Benchmark = {
  name: 'nexus-fairness',
  async run({ temporal, log }) {
    const id = randomUUID().slice(0, 8);
    const taskQueue = `bench-nexus-fairness-${id}`;
    const teams = nexusTeamsOf(
      taskQueue,
      TEAMS.map((t) => t.team),
    );
    const cleanups: Array<() => Promise<unknown>> = [];
    try {
      const stack = await startStack({
        temporal,
        taskQueue,
        // The sandbox's default timings and limits (120/min for the token).
        sandbox: { port: 0, db: ':memory:', log: () => {} },
        ratePerMinute: LIMIT_PER_MINUTE,
        initialBalance: 1_000_000_000,
        encryptionKey: generateKey(),
        teamWeight: (team) => weightOf(WEIGHTS, team),
        nexus: { teams },
      });
      cleanups.push(() => stack.close());
      for (const { sender } of TEAMS) await stack.admin.addSender(stack.accountId!, sender);

      // The callers' side: a namespace of its own, an endpoint per team, a worker with the default converter.
      const namespace = `bench-callers-${id}`;
      const connection = await Connection.connect({ address: temporal.address });
      cleanups.push(() => connection.close());
      await ensureNamespace(connection, namespace);
      const endpoints: Record<string, string> = {};
      for (const { team } of TEAMS) {
        const name = `bench-${team}-${id}`;
        cleanups.push(
          await addNexusEndpoint(connection, { name, namespace: temporal.namespace, taskQueue: teams[team]! }),
        );
        endpoints[team] = name;
      }
      const workerConnection = await NativeConnection.connect({ address: temporal.address });
      cleanups.push(() => workerConnection.close());
      const callerQueue = `bench-caller-${id}`;
      // A new namespace reaches the server's caches within seconds: the worker may be refused until then.
      let worker: Worker | undefined;
      for (let attempt = 0; !worker; attempt++) {
        try {
          worker = await Worker.create({
            connection: workerConnection,
            namespace,
            taskQueue: callerQueue,
            workflowsPath: CALLER_WORKFLOWS,
          });
        } catch (error) {
          if (attempt >= 30) throw error;
          await sleep(500);
        }
      }
      const running = worker.run();
      cleanups.push(async () => {
        worker.shutdown();
        await running;
      });
      const callers = new Client({ connection, namespace });

      log(`two teams through two endpoints (clinic:${WEIGHTS.clinic}, marketing:${WEIGHTS.marketing})`);
      const phaseSeconds = SETTLE_SECONDS + WINDOW_SECONDS;
      const seconds = 2 * phaseSeconds;
      const people = spreadNumbers(100);
      await login(stack, people.shift()!); // untimed: a deployed worker is warm
      // Each caller's operation lasts as long as its campaign: the campaigns are followed by their keys.
      const started = await Promise.all(
        TEAMS.map(async ({ team, sender, prefix }) => {
          const key = `nexus-fairness-${team}-${id}`;
          await callers.workflow.start<typeof runCampaignThrough>('runCampaignThrough', {
            workflowId: `bench-${team}-${id}`,
            taskQueue: callerQueue,
            args: [
              endpoints[team]!,
              {
                key,
                campaign: {
                  sender,
                  message: `Your ${team} reminder`,
                  audience: { type: 'inline', recipients: numbersStartingWith(Math.ceil(seconds * 2.2) + 60, prefix) },
                  chunkSize: 1,
                  chunksInFlight: CHUNKS_IN_FLIGHT,
                  preflight: false,
                  waitWindowMs: 60_000,
                },
              },
            ],
          });
          await untilStarted(stack, key);
          return { key, workflowId: campaignWorkflowId(key) };
        }),
      );
      const runs = started.map(({ key }) => stack.msgflow.campaign(key));
      cleanups.push(async () => {
        for (const run of runs) await run.cancel().catch(() => undefined);
      });
      const withLogins = { from: Date.now() + SETTLE_SECONDS * 1000, to: Date.now() + phaseSeconds * 1000 };
      log(`with logins every ${LOGIN_INTERVAL_MS / 1000} s: ${WINDOW_SECONDS} s after ${SETTLE_SECONDS} s`);
      const logins = loginsUntil(stack, people, withLogins.to);
      await sleep(withLogins.to - Date.now());
      await logins;
      const alone = { from: Date.now() + SETTLE_SECONDS * 1000, to: Date.now() + phaseSeconds * 1000 };
      log(`the campaigns alone: ${WINDOW_SECONDS} s after ${SETTLE_SECONDS} s`);
      await sleep(alone.to - Date.now());
      for (const run of runs) await run.cancel();

      const ledger = await stack.admin.ledger(stack.accountId!);
      const count = (workflowId: string, { from, to }: { from: number; to: number }) =>
        ledger.filter((e) => {
          const at = Date.parse(e.created_at);
          return e.kind === 'sms' && e.idempotency_key?.startsWith(`${workflowId}/`) && at >= from && at < to;
        }).length;
      const weightSum = WEIGHTS.clinic + WEIGHTS.marketing;
      const phase = (name: string, window: { from: number; to: number }): BenchRow => {
        const perMinute = (n: number) => round((n * 60_000) / (window.to - window.from));
        const [clinic, marketing] = started.map((s) => count(s.workflowId, window)) as [number, number];
        const shares = { clinic: clinic / (clinic + marketing), marketing: marketing / (clinic + marketing) };
        const within = (team: keyof typeof WEIGHTS) =>
          Math.abs(shares[team] - WEIGHTS[team] / weightSum) <= (SHARE_TOLERANCE * WEIGHTS[team]) / weightSum;
        return {
          case: name,
          'clinic req/min': perMinute(clinic),
          'marketing req/min': perMinute(marketing),
          'campaigns, % of limit': round((100 * perMinute(clinic + marketing)) / LIMIT_PER_MINUTE),
          'clinic share %': round(100 * shares.clinic),
          'marketing share %': round(100 * shares.marketing),
          target: `${round((100 * WEIGHTS.clinic) / weightSum)} / ${round((100 * WEIGHTS.marketing) / weightSum)} ±10% rel.`,
          result: within('clinic') && within('marketing') ? 'pass' : 'FAIL',
        };
      };
      const rows = [
        phase(`clinic:3, marketing:1, logins every ${LOGIN_INTERVAL_MS / 1000} s`, withLogins),
        phase('clinic:3, marketing:1, campaigns alone', alone),
      ];
      return {
        title: `Two teams through two Nexus endpoints on one token (${LIMIT_PER_MINUTE} requests/min), weights ${WEIGHTS.clinic}:${WEIGHTS.marketing}`,
        rows,
        notes: [
          `each phase: a window of ${WINDOW_SECONDS} s after ${SETTLE_SECONDS} s of settling; requests counted from the sandbox's ledger (each campaign's charged sends, one recipient a request), as the fairness bench counts them`,
          `callers: one workflow per team in namespace ${namespace.replace(id, '…')}, starting its campaign through its team's endpoint (the input names no team); endpoints target the team's queue (<queue>-nexus-<team>) on msgflow's worker`,
          `campaigns: one text, chunkSize 1, ${CHUNKS_IN_FLIGHT} chunks in flight, senders CLINIC and PROMO, no pre-flight`,
          `logins (first phase): sendOtp through the facade, code read from the inbox, verifyOtp, one every ${LOGIN_INTERVAL_MS / 1000} s: ${(2 * 60_000) / LOGIN_INTERVAL_MS} interactive requests/min of the limit, as in the fairness bench`,
          "one msgflow worker (serving both teams' queues) in this process, encrypted payloads, SQLite store in memory; sandbox at its default timings and limits in this process; Temporal dev server on this machine",
        ],
      };
    } finally {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    }
  },
};

/** Resolves once the campaign with `key` runs (its status answers). */
async function untilStarted(stack: RunningStack, key: string): Promise<void> {
  for (;;) {
    const running = await stack.msgflow
      .campaign(key)
      .status()
      .then(
        () => true,
        () => false,
      );
    if (running) return;
    await sleep(200);
  }
}
