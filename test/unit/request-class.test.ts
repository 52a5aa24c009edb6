/**
 * Which class of the request budget each kind of provider call takes: calls someone waits for (an OTP session's
 * local activities, a single send queued with interactive priority) may take the reserve; campaign calls and
 * everything else queued without it are bulk and leave it. Checked on the classifier and on the worker's
 * interceptor, with a recording gate in place of the store's budget (a faked collaborator).
 */
import type { Info } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor } from '@temporalio/worker';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { INTERACTIVE_PRIORITY } from '../../src/definitions/task-queues.js';
import type { RequestClass } from '../../src/store/index.js';
import {
  QUEUED_CALL_HEARTBEAT_MS,
  requestBudgetInterceptor,
  requestClassOf,
} from '../../src/temporal/request-classes.js';

type CallInfo = Pick<Info, 'activityType' | 'isLocal' | 'priority'>;

/** The priority the SDK decodes for a task that carries none. */
const NO_PRIORITY = { priorityKey: undefined, fairnessKey: undefined, fairnessWeight: undefined };
/** Campaigns carry none: the server's default key. */
const DEFAULT_PRIORITY = { priorityKey: 3 };

const CALLS: Array<{ call: string; info: CallInfo; expected: RequestClass }> = [
  {
    call: 'a campaign chunk',
    info: { activityType: 'sendCampaignChunk', isLocal: false, priority: NO_PRIORITY },
    expected: 'bulk',
  },
  {
    call: 'a campaign chunk with the default key',
    info: { activityType: 'sendCampaignChunk', isLocal: false, priority: DEFAULT_PRIORITY },
    expected: 'bulk',
  },
  {
    call: "a campaign's pricing read",
    info: { activityType: 'getCampaignPricing', isLocal: false, priority: NO_PRIORITY },
    expected: 'bulk',
  },
  {
    call: "a campaign's balance read",
    info: { activityType: 'getCampaignBalance', isLocal: false, priority: NO_PRIORITY },
    expected: 'bulk',
  },
  {
    call: "a campaign's status look-up after its window",
    info: { activityType: 'getMessageStatus', isLocal: false, priority: NO_PRIORITY },
    expected: 'bulk',
  },
  {
    call: 'a single sendSms, queued with interactive priority',
    info: { activityType: 'sendSms', isLocal: false, priority: INTERACTIVE_PRIORITY },
    expected: 'interactive',
  },
  {
    call: "an OTP session's send, a local activity with no priority",
    info: { activityType: 'sendOtpCode', isLocal: true, priority: NO_PRIORITY },
    expected: 'interactive',
  },
  {
    call: "an OTP session's verify, a local activity with the default key",
    info: { activityType: 'verifyOtpCode', isLocal: true, priority: DEFAULT_PRIORITY },
    expected: 'interactive',
  },
  {
    call: 'an OTP send queued on the provider queue (older sessions), with interactive priority',
    info: { activityType: 'sendOtpCode', isLocal: false, priority: INTERACTIVE_PRIORITY },
    expected: 'interactive',
  },
  {
    call: "a contact check's number look-up, queued without priority",
    info: { activityType: 'lookupNumber', isLocal: false, priority: NO_PRIORITY },
    expected: 'bulk',
  },
];

/** Runs one activity through the interceptor; answers the class the gate was asked for, if it was. */
async function gatedAs(info: CallInfo, callsProvider?: (type: string) => boolean): Promise<RequestClass | null> {
  let asked: RequestClass | null = null;
  const factory = requestBudgetInterceptor(async (kind) => {
    asked = kind;
  }, callsProvider);
  const context = { info, cancellationSignal: new AbortController().signal };
  const inbound = factory(context as never).inbound as ActivityInboundCallsInterceptor;
  const input = { args: [], headers: {} } as unknown as ActivityExecuteInput;
  await inbound.execute!(input, async () => 'done');
  return asked;
}

describe('request classes of provider calls', () => {
  it.each(CALLS)('$call is $expected', ({ info, expected }) => {
    expect(requestClassOf(info)).toBe(expected);
  });

  it.each(CALLS)('the interceptor asks the budget for $call as $expected', async ({ info, expected }) => {
    expect(await gatedAs(info)).toBe(expected);
  });

  it("the workflows' worker asks the budget only for the provider calls it names", async () => {
    const otpCalls = (type: string) => type === 'sendOtpCode' || type === 'verifyOtpCode';
    const store = { activityType: 'awaitMessages', isLocal: false, priority: NO_PRIORITY };
    const otpSend = { activityType: 'sendOtpCode', isLocal: true, priority: NO_PRIORITY };
    expect(await gatedAs(store, otpCalls)).toBeNull();
    expect(await gatedAs(otpSend, otpCalls)).toBe('interactive');
  });
});

describe('a provider call waiting for its turn at the budget', () => {
  afterEach(() => vi.useRealTimers());

  /** Heartbeats of one call whose turn comes after `waitMs`, then takes a second to call. */
  async function heartbeatsOf(info: CallInfo, waitMs: number): Promise<number> {
    vi.useFakeTimers();
    let heartbeats = 0;
    const gate = () => new Promise<void>((resolve) => setTimeout(resolve, waitMs));
    const context = { info, cancellationSignal: new AbortController().signal, heartbeat: () => heartbeats++ };
    const inbound = requestBudgetInterceptor(gate)(context as never).inbound as ActivityInboundCallsInterceptor;
    const input = { args: [], headers: {} } as unknown as ActivityExecuteInput;
    const call = inbound.execute!(input, () => new Promise((resolve) => setTimeout(() => resolve('done'), 1_000)));
    await vi.advanceTimersByTimeAsync(waitMs + 1_000);
    await expect(call).resolves.toBe('done');
    const counted = heartbeats;
    await vi.advanceTimersByTimeAsync(10 * QUEUED_CALL_HEARTBEAT_MS);
    expect(heartbeats).toBe(counted); // none once the call ended
    return counted;
  }

  it("heartbeats while a campaign chunk waits its team's turn (its attempt is bounded by its heartbeat timeout)", async () => {
    const chunk = { activityType: 'sendCampaignChunk', isLocal: false, priority: { fairnessKey: 'marketing' } };
    // A minute's wait, longer than a call's 30 s: a heartbeat every few seconds throughout.
    expect(await heartbeatsOf(chunk, 60_000)).toBe(Math.floor(61_000 / QUEUED_CALL_HEARTBEAT_MS));
  });

  it('does not heartbeat a local activity (it has none)', async () => {
    const otpSend = { activityType: 'sendOtpCode', isLocal: true, priority: NO_PRIORITY };
    expect(await heartbeatsOf(otpSend, 60_000)).toBe(0);
  });
});
