/**
 * The outbox under faults with real parts, shared by its benchmark (bench/outbox.ts) and its reliability suite
 * (test/reliability/outbox-faults.reliability.ts): an ingress and its relay in this process, on a SQLite store of
 * their own, the relay reaching the real Temporal through a TCP proxy that can be cut (an outage) with a client
 * that refuses every signal to chosen workflows (an interceptor that throws what the server answers a signal it
 * will not take: INVALID_ARGUMENT). The waiting workflows are open but no worker runs them: they take signals,
 * and what is measured is telling (Temporal accepted the signal), not the workflows' handling of it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection, ServiceError, type WorkflowClientInterceptor } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { generateWebhookSecret } from '../../src/api/signature.js';
import type { MessageOutcome } from '../../src/definitions/message-outcomes.js';
import { outcomeRouter } from '../../src/ingress/outcome-router.js';
import { type Relay, type RelayOptions, startRelay } from '../../src/ingress/relay.js';
import { type RunningIngress, startIngress } from '../../src/ingress/server.js';
import { standardWebhooksVerifier } from '../../src/ingress/verifier.js';
import { type MessageStore, openMessageStore } from '../../src/store/index.js';
import { lazyClient } from '../../src/temporal/connection.js';
import { msgflowDataConverter } from '../../src/temporal/data-converter.js';
import { postDelivered } from './delivered-event.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/** How long a single send may take to be told before the rig gives up on it (not a timing goal: a hang guard). */
const TOLD_GUARD_MS = 120_000;
const STARTS_IN_FLIGHT = 16;

export interface OutboxRig {
  store: MessageStore;
  relay: Relay;
  ingress: RunningIngress;
  /** Temporal for the rig's own calls (starts, histories, terminations): never cut. */
  client: Client;
  /** Between the relay and Temporal: `cut` is an outage for the relay only. */
  proxy: TcpProxy;
  /** From now on every signal to this workflow is refused. */
  refuse(workflowId: string): void;
  /** When (performance.now()) each refused signal to the workflow was tried. */
  refusedTries(workflowId: string): readonly number[];
  /** How often the relay tried to signal the workflow, whatever became of it (Temporal cut off, refused, told). */
  tries(workflowId: string): number;
  /** When (performance.now()) Temporal first accepted the relay's signal to each workflow. */
  firstToldAt: ReadonlyMap<string, number>;
  /**
   * When (Date.now(), the `now` the relay claimed with: the time its round chose to tell) each of the relay's
   * claims took the workflow to tell it, in order.
   */
  claimedAt(workflowId: string): readonly number[];
  /** Resolves when Temporal first accepted the relay's signal to the workflow. */
  told(workflowId: string): Promise<number>;
  /** Opens waiting workflows and registers their messages in the store. */
  waiting(workflows: readonly WaitingWorkflow[]): Promise<void>;
  /** A single send told through the ingress: when its delivery was answered 200, and when its workflow was told. */
  quietSend(label: string): Promise<QuietSend>;
  close(): Promise<void>;
}

export interface WaitingWorkflow {
  workflowId: string;
  messages: readonly string[];
}

export interface QuietSend {
  workflowId: string;
  answeredAt: number;
  toldAt: number;
  /** From the answer to the told signal, ms. */
  delayMs: number;
}

export async function startOutboxRig(
  temporal: { address: string; namespace: string },
  relayOptions: Partial<RelayOptions> = {},
): Promise<OutboxRig> {
  const dir = mkdtempSync(join(tmpdir(), 'msgflow-outbox-rig-'));
  const store = await openMessageStore({ file: join(dir, 'msgflow.db') });
  const connection = await Connection.connect({ address: temporal.address });
  const dataConverter = msgflowDataConverter();
  const client = new Client({ connection, namespace: temporal.namespace, dataConverter });
  const proxy = await startTcpProxy(temporal.address);
  const refused = new Map<string, number[]>();
  const tried = new Map<string, number>();
  const refusing: WorkflowClientInterceptor = {
    async signal(input, next) {
      const { workflowId } = input.workflowExecution;
      tried.set(workflowId, (tried.get(workflowId) ?? 0) + 1);
      const tries = refused.get(workflowId);
      if (!tries) return next(input);
      tries.push(performance.now());
      // As the client reports a signal the server refused: a ServiceError caused by the gRPC status.
      const cause = Object.assign(new Error('3 INVALID_ARGUMENT: signal refused by the test'), { code: 3 });
      throw new ServiceError('Failed to signal', { cause });
    },
  };
  // As `msgflow ingress` makes its relay's client (src/ingress/from-env.ts), through the proxy.
  const relayClient = await lazyClient(
    { TEMPORAL_ADDRESS: proxy.address, TEMPORAL_NAMESPACE: temporal.namespace },
    { dataConverter, interceptors: { workflow: [refusing] } },
  );
  const firstToldAt = new Map<string, number>();
  const toldWaiters = new Map<string, Array<(at: number) => void>>();
  const claims = new Map<string, number[]>();
  // The store as the relay sees it, its claims recorded: which round took which workflow to tell.
  const relayStore: Pick<MessageStore, 'outbox'> = {
    outbox: {
      ...store.outbox,
      async claim(workflowIds, options) {
        const claimed = await store.outbox.claim(workflowIds, options);
        for (const { workflowId } of claimed.outcomes)
          claims.set(workflowId, [...(claims.get(workflowId) ?? []), options.now ?? Date.now()]);
        return claimed;
      },
    },
  };
  const relay = startRelay({
    ...relayOptions,
    store: relayStore,
    client: relayClient,
    onSignal: (_outcomes, workflowId) => {
      if (firstToldAt.has(workflowId)) return;
      const at = performance.now();
      firstToldAt.set(workflowId, at);
      for (const resolve of toldWaiters.get(workflowId) ?? []) resolve(at);
      toldWaiters.delete(workflowId);
    },
  });
  const secret = generateWebhookSecret();
  const ingress = await startIngress({
    verifier: standardWebhooksVerifier([secret]),
    router: outcomeRouter({ store, relay }),
  });
  const taskQueue = `outbox-rig-${randomUUID()}`;
  const opened: string[] = [];

  const told = (workflowId: string) => {
    const at = firstToldAt.get(workflowId);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise<number>((resolve, reject) => {
      const guard = setTimeout(
        () => reject(new Error(`${workflowId} was not told within ${TOLD_GUARD_MS} ms`)),
        TOLD_GUARD_MS,
      );
      const waiters = toldWaiters.get(workflowId) ?? [];
      waiters.push((at) => {
        clearTimeout(guard);
        resolve(at);
      });
      toldWaiters.set(workflowId, waiters);
    });
  };

  const waiting = async (workflows: readonly WaitingWorkflow[]) => {
    let next = 0;
    const lane = async () => {
      while (next < workflows.length) {
        const { workflowId, messages } = workflows[next++]!;
        // Never picked up (no worker polls this queue): it only has to be open to take signals.
        await client.workflow.start('outboxRigWaiter', { workflowId, taskQueue, args: [] });
        opened.push(workflowId);
        await store.register(
          workflowId,
          messages.map((providerMessageId) => ({ providerMessageId })),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(STARTS_IN_FLIGHT, workflows.length) }, lane));
  };

  let sends = 0;
  const quietSend = async (label: string): Promise<QuietSend> => {
    const workflowId = `outbox-${label}-${randomUUID().slice(0, 8)}-${sends++}`;
    const message = `${workflowId}-m`;
    await waiting([{ workflowId, messages: [message] }]);
    const response = await postDelivered(ingress.webhookUrl, secret, message);
    const answeredAt = performance.now();
    if (response.status !== 200) throw new Error(`${workflowId}: delivery answered ${response.status}`);
    const toldAt = await told(workflowId);
    return { workflowId, answeredAt, toldAt, delayMs: Math.max(0, toldAt - answeredAt) };
  };

  return {
    store,
    relay,
    ingress,
    client,
    proxy,
    refuse: (workflowId) => void refused.set(workflowId, refused.get(workflowId) ?? []),
    refusedTries: (workflowId) => refused.get(workflowId) ?? [],
    tries: (workflowId) => tried.get(workflowId) ?? 0,
    firstToldAt,
    claimedAt: (workflowId) => claims.get(workflowId) ?? [],
    told,
    waiting,
    quietSend,
    async close() {
      await ingress.close();
      await relay.close();
      let next = 0;
      const lane = async () => {
        while (next < opened.length)
          await client.workflow
            .getHandle(opened[next++]!)
            .terminate('outbox rig closed')
            .catch(() => undefined);
      };
      await Promise.all(Array.from({ length: STARTS_IN_FLIGHT }, lane));
      await store.close();
      await relayClient.connection.close();
      await connection.close();
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An outage's backlog: single sends and campaigns, and the order their outcomes arrive in. */
export interface BacklogPlan {
  workflows: Array<WaitingWorkflow & { kind: 'single' | 'campaign'; first: string }>;
  /** Every final outcome, in the order the provider reports them: campaigns' and single sends' interleaved. */
  outcomes: string[];
}

/**
 * `singles` single sends and `campaigns` campaigns sharing `outcomes` outcomes, the singles' spread evenly among
 * the campaigns' (which take turns), as they arrive during an outage. A campaign also waits for one message that
 * never settles, as one mid-run does.
 */
export function backlogPlan(run: string, { singles, campaigns, outcomes }: BacklogSize): BacklogPlan {
  const perCampaign = Math.floor((outcomes - singles) / campaigns);
  const campaignIds = Array.from({ length: campaigns }, (_, c) => `outbox-campaign-${run}-${c}`);
  const singleIds = Array.from({ length: singles }, (_, s) => `outbox-single-${run}-${s}`);
  const campaignMessage = (c: number, m: number) => `${campaignIds[c]}-m${m}`;
  const order: string[] = [];
  const total = perCampaign * campaigns + singles;
  let s = 0;
  let k = 0;
  for (let i = 0; i < total; i++) {
    if (s < singles && i >= Math.floor(((s + 0.5) * total) / singles)) order.push(`${singleIds[s++]}-m`);
    else {
      order.push(campaignMessage(k % campaigns, Math.floor(k / campaigns)));
      k++;
    }
  }
  return {
    workflows: [
      ...campaignIds.map((workflowId, c) => ({
        workflowId,
        kind: 'campaign' as const,
        first: campaignMessage(c, 0),
        messages: [...Array.from({ length: perCampaign }, (_, m) => campaignMessage(c, m)), `${workflowId}-pending`],
      })),
      ...singleIds.map((workflowId) => ({
        workflowId,
        kind: 'single' as const,
        first: `${workflowId}-m`,
        messages: [`${workflowId}-m`],
      })),
    ],
    outcomes: order,
  };
}

export interface BacklogSize {
  singles: number;
  campaigns: number;
  outcomes: number;
}

/** Records the outcomes in the store as an ingress would (a transaction a batch), no relay woken. */
export async function recordOutcomes(store: MessageStore, ids: readonly string[], batch = 1000): Promise<void> {
  for (let i = 0; i < ids.length; i += batch)
    await store.recordEvents(
      ids.slice(i, i + batch).map((providerMessageId) => ({
        providerMessageId,
        status: 'delivered',
        timestamp: new Date().toISOString(),
      })),
    );
}

/** A waiter's untold-since or told-at time in the store, for the workflow's given message. */
export async function waiterTimes(
  store: MessageStore,
  workflowId: string,
  providerMessageId: string,
): Promise<{ untoldSince: number | null; toldAt: number | null }> {
  const waiter = (await store.message(providerMessageId))?.waiters.find((w) => w.workflowId === workflowId);
  return { untoldSince: waiter?.untoldSince ?? null, toldAt: waiter?.toldAt ?? null };
}

/** A backlog workflow: since when its oldest outcome waited, and when it was told (the time its round chose to). */
export interface ToldAge {
  untoldSince: number;
  toldAt: number;
  /**
   * Told by a later round than the first that took it to tell (from the time in question on): that round did not
   * get its signal through (Temporal failed the call, or the round left it untried).
   */
  retried?: boolean;
}

/**
 * How far the backlog's workflows were told out of their age order: pairs where the one with the older oldest
 * outcome was told in a later round than the newer one (the relay stamps a round's told marks with the time it
 * chose to tell, so one round's workflows tie). `afterRetry`: of those, the pairs whose older one was retried (its
 * first round's call did not go through while a younger one's, in a round beside it, did). `chosenAfter`: only
 * pairs whose newer one was told by a round chosen from then on. `minGap`: only pairs at least that many workflows
 * apart in age.
 */
export function ageOrderInversions(
  workflows: readonly ToldAge[],
  { chosenAfter = Number.NEGATIVE_INFINITY, minGap = 1 }: { chosenAfter?: number; minGap?: number } = {},
): { pairs: number; inverted: number; afterRetry: number } {
  const sorted = [...workflows].sort((a, b) => a.untoldSince - b.untoldSince);
  let pairs = 0;
  let inverted = 0;
  let afterRetry = 0;
  for (let i = 0; i < sorted.length; i++)
    for (let j = i + minGap; j < sorted.length; j++) {
      if (sorted[j]!.untoldSince === sorted[i]!.untoldSince) continue;
      pairs++;
      if (sorted[i]!.toldAt > sorted[j]!.toldAt && sorted[j]!.toldAt >= chosenAfter) {
        inverted++;
        if (sorted[i]!.retried) afterRetry++;
      }
    }
  return { pairs, inverted, afterRetry };
}

/** Whether the workflow was told by a later round than the first that took it to tell from `since` on. */
export function retriedSince(rig: Pick<OutboxRig, 'claimedAt'>, workflowId: string, toldAt: number, since: number) {
  const first = rig.claimedAt(workflowId).find((at) => at >= since);
  return first !== undefined && toldAt > first;
}

/** The outcomes Temporal holds in a workflow's `messageOutcomes` signals (its history), by provider message id. */
export async function outcomesInHistory(client: Client, workflowId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const event of (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []) {
    const payloads = event.workflowExecutionSignaledEventAttributes?.input?.payloads ?? [];
    for (const payload of payloads)
      for (const outcome of defaultPayloadConverter.fromPayload<MessageOutcome[]>(payload))
        ids.add(outcome.providerMessageId);
  }
  return ids;
}
