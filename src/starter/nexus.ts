/**
 * The handlers of the `msgflow` Nexus service (src/api/nexus-service.ts): each operation is the facade's call,
 * answered synchronously with a plain result (`startCampaign` is asynchronous: src/starter/nexus-campaign.ts).
 * The facade's client encrypts what it writes, so msgflow's histories stay sealed, while the answer is
 * serialized by the Nexus worker's converter, which has no codec: the caller reads it without msgflow's key
 * (see docs/nexus.md).
 *
 * `sendSms` can outlast one Nexus request (a final state may come hours later): its handler starts the send
 * once per Nexus request id and waits until just before the request's deadline; if the states are not final
 * yet, it answers with a retryable error and the server's retry of the same request waits on the same send.
 * `placeVoiceCall` does the same with its call. The workflows a handler starts link to the caller's
 * (src/starter/nexus-links.ts).
 */
import * as nexus from 'nexus-rpc';
import { type MsgflowNexusService, msgflowNexusService } from '../api/nexus-service.js';
import { DEFAULT_TEAM } from '../api/team-weights.js';
import type { Msgflow } from './index.js';
import { nexusCampaignTaskQueue } from '../definitions/task-queues.js';
import { campaignStatusOperation, startCampaignOperation } from './nexus-campaign.js';
import { withNexusLinks } from './nexus-links.js';
import { answering } from './nexus-errors.js';

export { nexusErrorOf } from './nexus-errors.js';

/** How long before the request's deadline a waiting handler answers, so its answer still reaches the server. */
export const DEADLINE_MARGIN_MS = 1_000;
/** The wait when a request carries no deadline (the server's default request timeout is 10 s). */
const DEFAULT_WAIT_MS = 8_000;

export interface NexusHandlerOptions {
  /**
   * The team the calls through this handler's queue send for: its endpoint's team (default `default`). A
   * campaign takes that team's share of the provider token; single sends, calls and OTPs go ahead of every
   * team's campaigns, as without Nexus.
   */
  team?: string;
}

export function msgflowNexusHandler(
  msgflow: Msgflow,
  { team = DEFAULT_TEAM }: NexusHandlerOptions = {},
): nexus.ServiceHandler<MsgflowNexusService['operations']> {
  return nexus.serviceHandler(msgflowNexusService, {
    sendSms: (ctx, input) =>
      answering(async () => {
        // The request id is the same on every retry of this start: the key makes it one send.
        const started = await withNexusLinks(ctx, () => msgflow.sendSms(input, { key: `nexus-${ctx.requestId}` }));
        return await beforeDeadline(ctx, () => started.result());
      }),
    sendOtp: (_ctx, input) => answering(() => msgflow.sendOtp(input)),
    verifyOtp: (_ctx, input) => answering(() => msgflow.verifyOtp(input)),
    startCampaign: startCampaignOperation(msgflow, nexusCampaignTaskQueue(msgflow.taskQueue), team),
    campaignStatus: (_ctx, input) => campaignStatusOperation(msgflow, input),
    // A call lasts minutes: answered like sendSms, the retried request waiting on the same call.
    placeVoiceCall: (ctx, input) =>
      answering(async () => {
        const started = await withNexusLinks(ctx, () =>
          msgflow.startVoiceCall(input, { key: `nexus-${ctx.requestId}` }),
        );
        return await beforeDeadline(ctx, () => started.result());
      }),
  });
}

/**
 * The result, if it comes before the request's deadline; else a retryable error (the server asks again, and the
 * next attempt waits on the same run). The abandoned wait is only a read of the run's result.
 */
async function beforeDeadline<T>(ctx: nexus.StartOperationContext, result: () => Promise<T>): Promise<T> {
  const waitMs = ctx.requestDeadline
    ? ctx.requestDeadline.getTime() - Date.now() - DEADLINE_MARGIN_MS
    : DEFAULT_WAIT_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    const stop = () =>
      reject(
        new nexus.HandlerError('UPSTREAM_TIMEOUT', 'the messages are not final yet; the retried request waits on', {
          retryableOverride: true,
        }),
      );
    timer = setTimeout(stop, Math.max(waitMs, 0));
    ctx.abortSignal.addEventListener('abort', stop, { once: true });
  });
  const waited = result();
  waited.catch(() => undefined);
  try {
    return await Promise.race([waited, late]);
  } finally {
    clearTimeout(timer);
  }
}
