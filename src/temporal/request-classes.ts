/**
 * Every provider call a worker makes waits for the token's request budget in the message store first, so all
 * workers together stay under the provider's limit whichever path a call takes: the provider queue (whose
 * server-enforced rate paces campaigns) or a local activity of the workflows' worker (OTP calls, which skip a
 * round trip through the server). Calls someone waits for may use the budget's reserve; campaign calls never do,
 * and ask for their team (the campaign's Temporal fairness key) at the weight the worker reads for it now.
 * The bucket itself, shared through the store, is src/store/request-bucket.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Info } from '@temporalio/activity';
import { INTERACTIVE_PRIORITY } from '../definitions/task-queues.js';
import { DEFAULT_TEAM } from '../api/team-weights.js';
import { budgetSettings, type MessageStore, type RequestAsk, type RequestClass } from '../store/index.js';

/**
 * Resolves once the budget grants one request of `kind` (bulk: for `team`, by default the default team);
 * rejects when `signal` aborts first.
 */
export type RequestGate = (kind: RequestClass, signal?: AbortSignal, team?: string) => Promise<void>;

/**
 * The gate of budget `name` (one per provider token) for a limit of `ratePerMinute`; `weightOf` says a team's
 * weight at the time of each ask (read live). The calls of one class (bulk: of one team) in this process take
 * turns, first come first served: only the first asks the store, so no call waits behind luckier later ones
 * until its activity times out, and a team whose turn it is never waits behind another's.
 */
export function storeRequestGate(
  store: Pick<MessageStore, 'takeRequest'>,
  name: string,
  ratePerMinute: number,
  weightOf: (team: string) => number = () => 1,
): RequestGate {
  const settings = budgetSettings(ratePerMinute);
  const granted = async (ask: () => RequestAsk, signal?: AbortSignal) => {
    for (;;) {
      signal?.throwIfAborted();
      const answer = await store.takeRequest(name, settings, ask());
      if (answer.granted) return;
      await sleep(answer.waitMs, undefined, { signal });
    }
  };
  const lastInLine = new Map<string, Promise<void>>();
  return (kind, signal, team = DEFAULT_TEAM) => {
    const line = kind === 'interactive' ? kind : `bulk:${team}`;
    const ask = (): RequestAsk => (kind === 'interactive' ? kind : { team, weight: weightOf(team) });
    const turn = (lastInLine.get(line) ?? Promise.resolve()).then(() => granted(ask, signal));
    const settled = turn.catch(() => undefined);
    lastInLine.set(line, settled);
    // A line nobody joined since is forgotten, so teams that stopped sending hold no memory.
    void settled.then(() => lastInLine.get(line) === settled && lastInLine.delete(line));
    return turn;
  };
}

/** Local activities (someone waits on their workflow task) and calls queued with interactive priority. */
export function requestClassOf(info: Pick<Info, 'isLocal' | 'priority'>): RequestClass {
  const interactive = info.isLocal || info.priority?.priorityKey === INTERACTIVE_PRIORITY.priorityKey;
  return interactive ? 'interactive' : 'bulk';
}

/** The team a request is made for: its campaign's fairness key (the default team without one). */
export function requestTeamOf(info: Pick<Info, 'priority'>): string {
  return info.priority?.fairnessKey || DEFAULT_TEAM;
}

/** How often a queued provider call tells the server it is alive (bulk calls' heartbeat timeout is 30 s). */
export const QUEUED_CALL_HEARTBEAT_MS = 5_000;

/**
 * Waits for the budget before each attempt of the activities `callsProvider` names. A bulk call may wait its
 * team's turn longer than a call takes (a light team's chunks behind a heavy one's): it heartbeats while it
 * waits and calls, so its attempt is bounded by its heartbeat timeout, not by the wait.
 */
export function requestBudgetInterceptor(
  gate: RequestGate,
  callsProvider: (activityType: string) => boolean = () => true,
): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        if (!callsProvider(ctx.info.activityType)) return next(input);
        // Local activities have no heartbeats: they run inside their workflow's task.
        const beat = ctx.info.isLocal ? undefined : setInterval(() => ctx.heartbeat(), QUEUED_CALL_HEARTBEAT_MS);
        try {
          await gate(requestClassOf(ctx.info), ctx.cancellationSignal, requestTeamOf(ctx.info));
          return await next(input);
        } finally {
          clearInterval(beat);
        }
      },
    },
  });
}
