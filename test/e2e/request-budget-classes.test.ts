/**
 * The request budget's classes through real workers. Two deployments share one provider token, and so one
 * budget in one store: each runs a campaign on its own task queue, together asking for twice what the budget
 * grants, so campaign requests queue up in each worker for their turn. Meanwhile an OTP session's send (a local
 * activity) and a single send must ask as interactive and take the reserve the campaigns leave: no campaign
 * request may be granted between their arrival at the worker and their grant (as interactive calls waiting in
 * the campaigns' line, or bulk calls, they would wait for every campaign request queued ahead). The workers'
 * store is the stack's, wrapped to record each ask of the budget with the activity that made it. One campaign
 * sends for a team: its requests must ask for that team (its fairness key reaches the worker), the other's for
 * the default team.
 */
import { Context } from '@temporalio/activity';
import type { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { isValidPhoneNumber } from 'libphonenumber-js/max';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { MessagingClient } from '../../src/client/index.js';
import type { RunningStack } from '../../src/stack.js';
import { Msgflow } from '../../src/starter/index.js';
import { budgetSettings, type MessageStore, type RequestClass } from '../../src/store/index.js';
import { createMsgflowWorker, type MsgflowWorker } from '../../src/worker.js';
import { startTestStack, testWorkflowBundle } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Low enough that the campaigns are held by the budget, high enough that the test takes seconds. */
const LIMIT_PER_MINUTE = 240;
const RECIPIENTS_PER_CAMPAIGN = 30;
/** Campaign requests granted before the interactive calls start: by then both workers hold a queue of them. */
const GRANTED_BEFORE = 16;

interface Ask {
  activityType: string;
  kind: RequestClass;
  /** The team a bulk ask was made for. */
  team: string | undefined;
  workflowId: string;
  granted: boolean;
  waitMs: number;
  /** When the budget answered, and when the asking activity attempt was scheduled (ms since the epoch). */
  at: number;
  scheduledAt: number;
}

const isCampaignGrant = (ask: Ask) => ask.activityType === 'sendCampaignChunk' && ask.granted;

/** The same store, recording every ask of the request budget with the activity that made it. */
function recordingAsks(store: MessageStore, asks: Ask[]): MessageStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'takeRequest')
        return async (...args: Parameters<MessageStore['takeRequest']>) => {
          const answer = await target.takeRequest(...args);
          const { activityType, currentAttemptScheduledTimestampMs, workflowExecution } = Context.current().info;
          const ask = args[2];
          asks.push({
            activityType,
            kind: typeof ask === 'string' ? ask : 'bulk',
            team: typeof ask === 'string' ? undefined : ask.team,
            workflowId: workflowExecution?.workflowId ?? '',
            granted: answer.granted,
            waitMs: answer.granted ? 0 : answer.waitMs,
            at: Date.now(),
            scheduledAt: currentAttemptScheduledTimestampMs,
          });
          return answer;
        };
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** When the server handed the (first) `activityType` task of a history to a worker. */
function startedAt(events: HistoryEvent[], activityType: string): number {
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activityType);
  const started = events.find(
    (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
  );
  const time = started?.eventTime;
  if (!time) throw new Error(`no started ${activityType} in the history`);
  return Number(time.seconds) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
}

describe('request budget classes while campaigns drain the budget', () => {
  let stack: RunningStack;
  let connection: NativeConnection;
  const workers: Array<{ worker: MsgflowWorker; running: Promise<void> }> = [];
  const asks: Ask[] = [];
  const otherQueue = () => `${stack.taskQueue}-other`;

  beforeAll(async () => {
    stack = await startTestStack({ startWorker: false, ratePerMinute: LIMIT_PER_MINUTE });
    const { address, namespace } = inject('temporal');
    connection = await NativeConnection.connect({ address });
    for (const taskQueue of [stack.taskQueue, otherQueue()]) {
      const worker = await createMsgflowWorker({
        connection,
        namespace,
        taskQueue,
        messaging: new MessagingClient({ baseUrl: stack.sandbox.baseUrl, token: stack.token, maxRetries: 0 }),
        store: recordingAsks(stack.store, asks),
        providerRatePerMinute: LIMIT_PER_MINUTE,
        otpKeyRing: stack.otpKeys.sealing,
        workflowBundle: await testWorkflowBundle(),
      });
      workers.push({ worker, running: worker.run() });
    }
  });
  afterAll(async () => {
    for (const { worker } of workers) worker.shutdown();
    await Promise.all(workers.map(({ running }) => running.catch(() => undefined)));
    await connection?.close();
    await stack?.close();
  });

  it(
    'gives the reserve to the OTP send and the single send, never to the campaigns',
    { timeout: 120_000 },
    async () => {
      const numbers = validNumbers(2 * RECIPIENTS_PER_CAMPAIGN + 2);
      const [otpRecipient, smsRecipient] = [numbers.pop()!, numbers.pop()!];
      const campaigns = await Promise.all(
        [stack.msgflow, new Msgflow(stack.temporal, otherQueue())].map((msgflow, i) =>
          msgflow.startCampaign({
            sender: 'ACME',
            message: 'Your appointment is tomorrow at 10:00',
            audience: {
              type: 'inline',
              recipients: numbers.slice(i * RECIPIENTS_PER_CAMPAIGN, (i + 1) * RECIPIENTS_PER_CAMPAIGN),
            },
            chunkSize: 1,
            chunksInFlight: 8,
            preflight: false,
            ...(i === 0 ? { team: 'clinic' } : {}),
          }),
        ),
      );
      await waitFor(
        () => asks.filter(isCampaignGrant).length >= GRANTED_BEFORE,
        `${GRANTED_BEFORE} campaign requests granted`,
        { timeoutMs: 30_000 },
      );
      expect(asks.some((a) => a.activityType === 'sendCampaignChunk' && !a.granted)).toBe(true);

      const otp = await stack.msgflow.sendOtp({ purpose: 'login', recipient: otpRecipient });
      expect(otp.status).toBe('sent');
      const single = await stack.msgflow.sendSms({ recipients: [smsRecipient], sender: 'ACME', message: 'Shipped' });
      await single.result();
      await Promise.all(campaigns.map((c) => c.result()));

      const classes = new Map<string, Set<RequestClass>>();
      for (const ask of asks) classes.set(ask.activityType, (classes.get(ask.activityType) ?? new Set()).add(ask.kind));
      expect(Object.fromEntries([...classes].map(([type, kinds]) => [type, [...kinds]]))).toEqual({
        sendCampaignChunk: ['bulk'],
        sendOtpCode: ['interactive'],
        sendSms: ['interactive'],
      });

      const teamsOf = (workflowId: string) => [
        ...new Set(asks.filter((a) => a.workflowId === workflowId).map((a) => a.team)),
      ];
      expect(campaigns.map((c) => teamsOf(c.workflowId))).toEqual([['clinic'], ['default']]);

      // A local activity runs as soon as its workflow task schedules it; a queued one once the server hands it over.
      const history = (await stack.temporal.workflow.getHandle(single.workflowId).fetchHistory()).events ?? [];
      const arrivals = {
        sendOtpCode: asks.find((a) => a.activityType === 'sendOtpCode')!.scheduledAt,
        sendSms: startedAt(history, 'sendSms'),
      };
      const interval = Math.ceil(1 / budgetSettings(LIMIT_PER_MINUTE).perMs);
      for (const [type, arrival] of Object.entries(arrivals)) {
        const own = asks.filter((a) => a.activityType === type);
        const grant = own.find((a) => a.granted)!;
        // Granted at once, or after one wait of at most a refill interval (the other interactive call had the reserve).
        expect(own.indexOf(grant), `${type} asks refused`).toBeLessThanOrEqual(1);
        for (const refused of own.slice(0, own.indexOf(grant))) expect(refused.waitMs).toBeLessThanOrEqual(interval);
        // No campaign request went between its arrival and its grant (one may be answered as it arrives)...
        const campaignGrantsWhileWaiting = asks.filter((a) => isCampaignGrant(a) && a.at > arrival && a.at < grant.at);
        expect(campaignGrantsWhileWaiting.length, `campaign requests granted while ${type} waited`).toBeLessThanOrEqual(
          1,
        );
        // ...while requests of the campaigns were still queued.
        expect(
          asks.some((a) => isCampaignGrant(a) && a.at > grant.at),
          `campaign requests after ${type}`,
        ).toBe(true);
      }
    },
  );
});

/** Distinct valid Nigerian mobile numbers. */
function validNumbers(count: number): string[] {
  const numbers: string[] = [];
  for (let n = 0; numbers.length < count; n++) {
    const candidate = `2348033${String(n).padStart(6, '0')}`;
    if (isValidPhoneNumber(`+${candidate}`)) numbers.push(candidate);
  }
  return numbers;
}
