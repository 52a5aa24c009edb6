/**
 * Every provider call a worker makes waits for the token's request budget in the message store first, so all
 * workers together stay under the provider's limit whichever path a call takes: the provider queue (whose
 * server-enforced rate paces campaigns) or a local activity of the workflows' worker (OTP calls, which skip a
 * round trip through the server). Calls someone waits for may use the budget's reserve; campaign calls never do.
 * The bucket itself, shared through the store, is src/store/request-bucket.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Info } from '@temporalio/activity';
import { INTERACTIVE_PRIORITY } from '../definitions/task-queues.js';
import { budgetSettings, type MessageStore, type RequestClass } from '../store/index.js';

/** Resolves once the budget grants one request of `kind` (rejects when `signal` aborts first). */
export type RequestGate = (kind: RequestClass, signal?: AbortSignal) => Promise<void>;

/**
 * The gate of budget `name` (one per provider token) for a limit of `ratePerMinute`. The calls of one class
 * in this process take turns, first come first served: only the first asks the store, so no call waits
 * behind luckier later ones until its activity times out.
 */
export function storeRequestGate(
  store: Pick<MessageStore, 'takeRequest'>,
  name: string,
  ratePerMinute: number,
): RequestGate {
  const settings = budgetSettings(ratePerMinute);
  const granted = async (kind: RequestClass, signal?: AbortSignal) => {
    for (;;) {
      signal?.throwIfAborted();
      const answer = await store.takeRequest(name, settings, kind);
      if (answer.granted) return;
      await sleep(answer.waitMs, undefined, { signal });
    }
  };
  const lastInLine: Record<RequestClass, Promise<void>> = { interactive: Promise.resolve(), bulk: Promise.resolve() };
  return (kind, signal) => {
    const turn = lastInLine[kind].then(() => granted(kind, signal));
    lastInLine[kind] = turn.catch(() => undefined);
    return turn;
  };
}

/** Local activities (someone waits on their workflow task) and calls queued with interactive priority. */
export function requestClassOf(info: Pick<Info, 'isLocal' | 'priority'>): RequestClass {
  const interactive = info.isLocal || info.priority?.priorityKey === INTERACTIVE_PRIORITY.priorityKey;
  return interactive ? 'interactive' : 'bulk';
}

/** Waits for the budget before each attempt of the activities `callsProvider` names. */
export function requestBudgetInterceptor(
  gate: RequestGate,
  callsProvider: (activityType: string) => boolean = () => true,
): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        if (callsProvider(ctx.info.activityType)) await gate(requestClassOf(ctx.info), ctx.cancellationSignal);
        return next(input);
      },
    },
  });
}
