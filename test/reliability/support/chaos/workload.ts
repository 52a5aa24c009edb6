/**
 * The fault run's workload: what msgflow's users do at once, through the facade (`Msgflow`) with a Temporal
 * client that the faults also reach (a call failing during a fault is retried, with the same key where the
 * call takes one): single sends to numbers with every final outcome, OTP logins (right codes, wrong codes,
 * locked sessions, replays, some never verified), a campaign paused and resumed, one cancelled, and
 * suppressions, some made before the sends and some during them; and the parts of workload-promises.ts (two
 * teams' campaigns, an erasure, a retry to the failed, a reminder schedule). It records what it asked for and
 * what it was answered; the checker holds that against what the run left.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { FINAL_STATUSES, type FinalStatus } from '../../../../src/api/constants.js';
import type { OtpVerifyStatus } from '../../../../src/api/otp.js';
import { MAGIC_NUMBERS } from '../../../../src/sandbox/index.js';
import type { CampaignInput } from '../../../../src/api/campaign-io.js';
import type { CampaignRun } from '../../../../src/starter/campaigns.js';
import type { Msgflow } from '../../../../src/starter/index.js';
import type { SandboxAdmin } from '../../../../src/sandbox/index.js';
import { wrongOtpCode } from '../../../support/otp-inbox.js';
import { seededRandom } from '../summary.js';
import { type ErasureRecord, TEAM_WEIGHTS, workloadPromises } from './workload-promises.js';

export interface SingleSend {
  key: string;
  workflowId?: string;
  recipient: string;
  /** The outcome the provider was told to give (a magic number's, or forced for the number). */
  expected: FinalStatus;
  /** Since the run's start; accepted once Temporal took the start. */
  startedMs: number;
  accepted: boolean;
}

export type OtpPlan = 'right' | 'wrong-then-right' | 'locked' | 'replay' | 'never';

export interface OtpLogin {
  recipient: string;
  plan: OtpPlan;
  workflowId?: string;
  startedMs: number;
  /** Each verification tried, in order: whether its code was the right one, and the answer. */
  verifications: Array<{ right: boolean; status: OtpVerifyStatus | 'error' }>;
  /** Why the login stopped short (no code arrived, calls kept failing), if it did. */
  note?: string;
}

export interface CampaignRecord {
  key: string;
  workflowId?: string;
  audience: string[];
  /** `cancelled`: the workload cancelled it; otherwise it runs to the end (paused and resumed on the way). */
  fate: 'complete' | 'cancelled';
  steps: string[];
  /** The team it sends for (MSGFLOW_TEAM_WEIGHTS), when not the default. */
  team?: string;
  /** The key of the campaign it retries to the failed (`msgflow.retryCampaign`). */
  retryOf?: string;
  /** The schedule whose run it is. */
  scheduleId?: string;
}

export interface WorkloadLog {
  sends: SingleSend[];
  otps: OtpLogin[];
  campaigns: CampaignRecord[];
  /** On the suppression list before any send (digits): never to be charged. */
  suppressedBefore: string[];
  /** Added while sends were running (no promise about the sends already under way). */
  suppressedDuring: string[];
  /** Calls that failed and were retried (faults reach the workload's own client too). */
  retriedCalls: number;
  /** The teams' weights the workers were given (MSGFLOW_TEAM_WEIGHTS). */
  teamWeights: Record<string, number>;
  /** A number opted out and erased while sends still target it. */
  erasure?: ErasureRecord;
}

/** What the workload's parts share: the facade, the log being written, the clock, and its patient calls. */
export interface WorkloadContext {
  msgflow: Msgflow;
  admin: SandboxAdmin;
  options: WorkloadOptions;
  result: WorkloadLog;
  since: () => number;
  log: (line: string) => void;
  patiently: <T>(what: string, call: () => Promise<T>) => Promise<T>;
  startCampaign: (record: CampaignRecord, input?: Partial<CampaignInput>) => Promise<CampaignRun | undefined>;
}

export interface WorkloadOptions {
  msgflow: Msgflow;
  admin: SandboxAdmin;
  seed: number;
  /** Since when the run's times count. */
  startedAt: number;
  /** The workload stops starting new work this long after the start. */
  untilMs: number;
  /** …but single sends go on until this long after the start (into the quiet period: sends no fault meets). */
  sendsUntilMs?: number;
  campaignRecipients: number;
  /** Between single sends and between OTP logins. */
  sendEveryMs?: number;
  otpEveryMs?: number;
  log?: (line: string) => void;
}

/** Numbers the workload owns, by prefix: none of them is ever sent to twice (magic numbers aside). */
const SINGLE_PREFIX = '234803';
const OTP_PREFIX = '234805';
const CAMPAIGN_PREFIX = ['234806', '234807'];
/** A call that keeps failing through faults is given up after this long. */
const CALL_PATIENCE_MS = 90_000;
/** Wrong codes a `locked` login's session allows: its two wrong codes lock it. */
export const LOCKED_PLAN_ATTEMPTS = 2;
const NON_MAGIC_OUTCOMES: FinalStatus[] = [...FINAL_STATUSES];
/**
 * Sessions end within a minute (codes expire in 30 s, lockouts pass in 10): a session is pinned to its build until it ends,
 * and a deploy stops the old build only then (the defaults, 10 and 15 minutes, would hold it past the run).
 */
const OTP_LIFETIMES = { ttlSeconds: 30, lockoutSeconds: 10 };

export async function runWorkload(options: WorkloadOptions): Promise<WorkloadLog> {
  const { msgflow, admin } = options;
  const random = seededRandom(options.seed ^ 0x5eed);
  const since = () => Date.now() - options.startedAt;
  const log = options.log ?? (() => {});
  const result: WorkloadLog = {
    sends: [],
    otps: [],
    campaigns: [],
    suppressedBefore: [],
    suppressedDuring: [],
    retriedCalls: 0,
    teamWeights: { ...TEAM_WEIGHTS },
  };
  /** Retries `call` through faults (with the same arguments, so the same key) until it answers or patience runs out. */
  const patiently = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    const deadline = Date.now() + CALL_PATIENCE_MS;
    for (;;) {
      try {
        return await withinDeadline((signal) => msgflow.client.connection.withAbortSignal(signal, call), deadline);
      } catch (error) {
        if (Date.now() > deadline || isRefusal(error)) throw error;
        result.retriedCalls++;
        log(`retrying ${what}: ${(error as Error).message.split('\n')[0]}`);
        await sleep(1_000);
      }
    }
  };

  // Campaigns: the main one (paused and resumed) and a small one cancelled; a few of the main one's numbers
  // are on the suppression list from the start.
  const main: CampaignRecord = {
    key: `chaos-${options.seed}-main`,
    audience: numbers(CAMPAIGN_PREFIX[0]!, options.campaignRecipients),
    fate: 'complete',
    steps: [],
  };
  const cancelled: CampaignRecord = {
    key: `chaos-${options.seed}-cancelled`,
    audience: numbers(CAMPAIGN_PREFIX[1]!, 60),
    fate: 'cancelled',
    steps: [],
  };
  result.campaigns.push(main, cancelled);
  result.suppressedBefore = main.audience.filter((_, i) => i % 97 === 13);
  await patiently('suppressions.add', () => msgflow.suppressions.add(result.suppressedBefore.map((n) => `+${n}`)));

  const work: Array<Promise<unknown>> = [];
  const startCampaign = async (
    record: CampaignRecord,
    input: Partial<CampaignInput> = {},
  ): Promise<CampaignRun | undefined> => {
    try {
      const run = await patiently(`campaign ${record.key}`, () =>
        msgflow.startCampaign(
          {
            sender: 'ACME',
            message: 'chaos run',
            audience: { type: 'inline', recipients: record.audience },
            // Small chunks: at the workers' two requests a second, a campaign lasts a good part of the run.
            chunkSize: Math.max(5, Math.ceil(record.audience.length / 40)),
            ...input,
          },
          { key: record.key },
        ),
      );
      record.workflowId = run.workflowId;
      record.steps.push(`started +${(since() / 1000).toFixed(1)}s`);
      return run;
    } catch (error) {
      record.steps.push(`never started: ${(error as Error).message}`);
      return undefined;
    }
  };
  const steer = async (record: CampaignRecord, run: CampaignRun, step: 'pause' | 'resume' | 'cancel') => {
    try {
      await patiently(`${step} ${record.key}`, () => run[step]());
      record.steps.push(`${step} +${(since() / 1000).toFixed(1)}s`);
    } catch (error) {
      record.steps.push(`${step} failed: ${(error as Error).message}`);
    }
  };
  work.push(
    (async () => {
      const run = await startCampaign(main);
      if (!run) return;
      await sleep(options.untilMs * (0.05 + random() * 0.1));
      await steer(main, run, 'pause');
      await sleep(3_000 + random() * 5_000);
      await steer(main, run, 'resume');
    })(),
    (async () => {
      await sleep(options.untilMs * random() * 0.3);
      const run = await startCampaign(cancelled);
      if (!run) return;
      await sleep(1_000 + random() * 3_000);
      await steer(cancelled, run, 'cancel');
    })(),
    ...workloadPromises({ msgflow, admin, options, result, since, log, patiently, startCampaign }),
  );

  // Single sends and OTP logins, each on its own clock until the workload's end.
  const sendEveryMs = options.sendEveryMs ?? 1_500;
  const otpEveryMs = options.otpEveryMs ?? 3_000;
  let sendCount = 0;
  let otpCount = 0;
  const sends = (async () => {
    while (since() < (options.sendsUntilMs ?? options.untilMs)) {
      const n = sendCount++;
      const expected = NON_MAGIC_OUTCOMES[Math.floor(random() * NON_MAGIC_OUTCOMES.length)]!;
      // One in three goes to the outcome's magic number; the others to a number of their own told the outcome.
      const magic = random() < 1 / 3;
      const recipient = magic ? MAGIC_NUMBERS[expected] : `${SINGLE_PREFIX}${String(1_000_000 + n)}`;
      const send: SingleSend = {
        key: `chaos-${options.seed}-sms-${n}`,
        recipient,
        expected,
        startedMs: since(),
        accepted: false,
      };
      result.sends.push(send);
      work.push(
        (async () => {
          try {
            if (!magic) await patiently('setOutcome', () => admin.setOutcome(recipient, expected));
            const started = await patiently(`sendSms ${send.key}`, () =>
              msgflow.sendSms({ recipients: [recipient], sender: 'ACME', message: `chaos ${n}` }, { key: send.key }),
            );
            send.workflowId = started.workflowId;
            send.accepted = true;
          } catch (error) {
            log(`send ${send.key} never accepted: ${(error as Error).message}`);
          }
        })(),
      );
      // Now and then a number of the main campaign joins the suppression list while it sends.
      if (n % 10 === 5) {
        const number = main.audience[Math.floor(random() * main.audience.length)]!;
        if (!result.suppressedBefore.includes(number)) {
          result.suppressedDuring.push(number);
          work.push(patiently('suppressions.add', () => msgflow.suppressions.add([`+${number}`])).catch(() => {}));
        }
      }
      await sleep(sendEveryMs * (0.5 + random()));
    }
  })();
  const otps = (async () => {
    const plans: OtpPlan[] = ['right', 'right', 'wrong-then-right', 'locked', 'replay', 'never'];
    while (since() < options.untilMs) {
      const n = otpCount++;
      const login: OtpLogin = {
        recipient: `${OTP_PREFIX}${String(1_000_000 + n)}`,
        plan: plans[Math.floor(random() * plans.length)]!,
        startedMs: since(),
        verifications: [],
      };
      result.otps.push(login);
      work.push(runLogin(login, { msgflow, admin, patiently }));
      await sleep(otpEveryMs * (0.5 + random()));
    }
  })();
  await Promise.all([sends, otps]);
  await Promise.all(work);
  return result;
}

async function runLogin(
  login: OtpLogin,
  {
    msgflow,
    admin,
    patiently,
  }: { msgflow: Msgflow; admin: SandboxAdmin; patiently: <T>(what: string, call: () => Promise<T>) => Promise<T> },
): Promise<void> {
  const pair = { purpose: 'login', recipient: login.recipient };
  try {
    const sent = await patiently(`sendOtp ${login.recipient}`, () =>
      msgflow.sendOtp({ ...pair, maxAttempts: login.plan === 'locked' ? LOCKED_PLAN_ATTEMPTS : 5, ...OTP_LIFETIMES }),
    );
    login.workflowId = sent.workflowId;
  } catch (error) {
    login.note = `never sent: ${(error as Error).message}`;
    return;
  }
  if (login.plan === 'never') return;
  const code = await codeOf(admin, login.recipient);
  if (!code) {
    login.note = 'no code arrived';
    return;
  }
  const verify = async (right: boolean) => {
    try {
      const answer = await patiently(`verifyOtp ${login.recipient}`, () =>
        msgflow.verifyOtp({ ...pair, code: right ? code : wrongOtpCode(code) }),
      );
      login.verifications.push({ right, status: answer.status });
    } catch {
      login.verifications.push({ right, status: 'error' });
    }
  };
  if (login.plan === 'wrong-then-right') await verify(false);
  if (login.plan === 'locked') {
    await verify(false);
    await verify(false);
  }
  await verify(true);
  if (login.plan === 'replay') await verify(true);
}

/** The code the recipient's phone shows, once it arrives (up to a couple of minutes through faults). */
async function codeOf(admin: SandboxAdmin, recipient: string): Promise<string | undefined> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    try {
      const [newest] = await admin.inbox(recipient);
      const code = newest?.text.match(/\b(\d{4,10})\b/)?.[1];
      if (code) return code;
    } catch {
      // the sandbox is never faulted, but keep going whatever it answers
    }
    await sleep(500);
  }
  return undefined;
}

/**
 * A call that never answers (an OTP verification whose session lost its build's workers waits forever) fails
 * at the deadline, so the workload ends and the checker judges what it left. Its Temporal calls are cancelled
 * then, so none outlives the workload: a call still retrying when the run closes its connection ends the process
 * ("Channel has been shut down", thrown from the client's retry timer) before the report.
 */
async function withinDeadline<T>(call: (signal: AbortSignal) => Promise<T>, deadline: number): Promise<T> {
  const patience = new AbortController();
  const answer = call(patience.signal);
  answer.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        patience.abort();
        reject(new Error('no answer within the call patience'));
      },
      // Just past it: the caller gives up once the deadline has passed.
      Math.max(0, deadline - Date.now()) + 1,
    );
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

function numbers(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(1_000_000 + i)}`);
}

/** A refusal of the input (4xx-like: invalid, key reused) is not retried; faults are. */
function isRefusal(error: unknown): boolean {
  const { name = '', message = '' } = (error as Error | undefined) ?? {};
  return /Invalid|KeyReused|Validation|OtpBlocked/i.test(name) || /already completed/i.test(message);
}
