/**
 * The handlers of the `msgflow` Nexus service (src/api/nexus-service.ts): each operation is the facade's call,
 * answered synchronously with a plain result. The facade's client encrypts what it writes, so msgflow's
 * histories stay sealed, while the answer is serialized by the Nexus worker's converter, which has no codec:
 * the caller reads it without msgflow's key (see docs/nexus.md).
 *
 * `sendSms` can outlast one Nexus request (a final state may come hours later): its handler starts the send
 * once per Nexus request id and waits until just before the request's deadline; if the states are not final
 * yet, it answers with a retryable error and the server's retry of the same request waits on the same send.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import * as nexus from 'nexus-rpc';
import { type MsgflowNexusService, msgflowNexusService } from '../api/nexus-service.js';
import { DEFAULT_TEAM } from '../api/team-weights.js';
import type { Msgflow } from './index.js';
import { forTeam } from './nexus-team.js';
import { OtpBlockedError, OtpRateLimitedError, OtpSendFailedError, OtpVerificationUnavailableError } from './otp.js';
import { InvalidWorkflowInputError } from './validate.js';

/** How long before the request's deadline a waiting handler answers, so its answer still reaches the server. */
export const DEADLINE_MARGIN_MS = 1_000;
/** The wait when a request carries no deadline (the server's default request timeout is 10 s). */
const DEFAULT_WAIT_MS = 8_000;

export interface NexusHandlerOptions {
  /**
   * The team the calls through this handler's queue send for: its endpoint's team (default `default`). A
   * campaign takes that team's share of the provider token; single sends and OTPs go ahead of every team's
   * campaigns, as without Nexus.
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
        const started = await msgflow.sendSms(input, { key: `nexus-${ctx.requestId}` });
        return await beforeDeadline(ctx, () => started.result());
      }),
    sendOtp: (_ctx, input) => answering(() => msgflow.sendOtp(input)),
    verifyOtp: (_ctx, input) => answering(() => msgflow.verifyOtp(input)),
    startCampaign: (_ctx, { key, campaign }) =>
      answering(async () => {
        const run = await msgflow.startCampaign(forTeam(campaign, team, 'Invalid campaign'), { key });
        return { key: run.key, workflowId: run.workflowId };
      }),
  });
}

/** The facade's answer, or its error as the caller should see it: bad input, a typed refusal, or a retry. */
async function answering<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw nexusErrorOf(error);
  }
}

export function nexusErrorOf(error: unknown): unknown {
  if (error instanceof InvalidWorkflowInputError)
    // BAD_REQUEST is never retried: the message names each offending field.
    return new nexus.HandlerError('BAD_REQUEST', error.message, { cause: error });
  if (error instanceof OtpVerificationUnavailableError)
    return new nexus.HandlerError('UNAVAILABLE', error.message, { cause: error });
  const refusal = refusalOf(error);
  if (refusal) return new nexus.OperationError('failed', refusal.message, { cause: refusal });
  if (error instanceof WorkflowFailedError)
    return new nexus.OperationError('failed', error.cause?.message ?? error.message, { cause: error.cause });
  return error;
}

/** The facade's typed refusals, as a non-retryable failure of the same type with its reason in details. */
function refusalOf(error: unknown): ApplicationFailure | undefined {
  const refusal = (details: unknown[]) =>
    ApplicationFailure.create({
      type: (error as Error).name,
      message: (error as Error).message,
      nonRetryable: true,
      details,
    });
  if (error instanceof OtpSendFailedError) return refusal([{ failureType: error.failureType }]);
  if (error instanceof OtpRateLimitedError) return refusal([{ retryAfterSeconds: error.retryAfterSeconds }]);
  if (error instanceof OtpBlockedError)
    return refusal([{ reason: error.reason, retryAfterSeconds: error.retryAfterSeconds }]);
  return undefined;
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
