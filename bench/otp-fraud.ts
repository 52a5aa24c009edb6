/**
 * `otp-fraud`: the OTP fraud guard with its default rules against SMS pumping. A script asks for codes for
 * 2,000 sequential numbers in 10 prefixes of allowed countries and never verifies, while 200 people spread
 * over countries and prefixes log in (code read from the inbox, then verified). Prints the share of the
 * attack's attempts that reached the provider, the people it blocked, and `sendOtp` latency with the guard on
 * beside a worker with it off (MSGFLOW_OTP_GUARD_RULES=off), logins alternating between the two.
 * Each stack's worker runs in a process of its own, as deployed; the windows are the real ones.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { OtpBlockedError } from '../src/starter/otp.js';
import type { RunningStack } from '../src/stack.js';
import { BENCH_SANDBOX } from './campaign-target.js';
import { type Benchmark, type BenchContext, percentile, round } from './harness.js';
import { runLoad, sizeFromEnv } from './load.js';
import { type BenchCountry, sequentialNumbers, spreadNumbers } from './numbers.js';
import { type OtpBenchStack, startOtpBenchStack } from './otp-worker.js';

const ATTACK_ATTEMPTS = sizeFromEnv('MSGFLOW_BENCH_OTP_FRAUD_ATTEMPTS', 2_000);
const LOGINS = sizeFromEnv('MSGFLOW_BENCH_OTP_FRAUD_LOGINS', 200);
const ATTACK_PREFIXES: [BenchCountry, number][] = [
  ['NG', 611],
  ['NG', 612],
  ['NG', 613],
  ['NG', 614],
  ['GH', 611],
  ['GH', 612],
  ['GH', 613],
  ['KE', 611],
  ['KE', 612],
  ['KE', 613],
];
const PEOPLES_COUNTRIES: BenchCountry[] = ['NG', 'GH', 'KE', 'BR', 'IN'];
const ATTACK_IN_FLIGHT = 8;
const LOGINS_IN_FLIGHT = 2;
const WARM_UP = 10;

export const otpFraudBenchmark: Benchmark = {
  name: 'otp-fraud',
  async run(context) {
    const guarded = await stackFor(context, 'on', {});
    const unguarded = await stackFor(context, 'off', { MSGFLOW_OTP_GUARD_RULES: 'off' }).catch(async (error) => {
      await guarded.close();
      throw error;
    });
    try {
      const people = peopleNumbers(2 * (LOGINS + WARM_UP));
      for (let i = 0; i < WARM_UP; i++) {
        await login(guarded.stack, people.shift()!);
        await login(unguarded.stack, people.shift()!);
      }
      context.log(`latency: ${LOGINS} logins on each worker, alternating, one at a time`);
      const on: Login[] = [];
      const off: Login[] = [];
      for (let i = 0; i < LOGINS; i++) {
        on.push(await login(guarded.stack, people.shift()!));
        off.push(await login(unguarded.stack, people.shift()!));
      }

      context.log(
        `attack: ${ATTACK_ATTEMPTS} attempts over ${ATTACK_PREFIXES.length} prefixes, beside ${LOGINS} logins`,
      );
      const attackNumbers = attackList(ATTACK_ATTEMPTS);
      const reasons: Record<string, number> = {};
      let reached = 0;
      const morePeople = peopleNumbers(LOGINS, 300);
      const duringAttack: Login[] = [];
      const started = performance.now();
      const [attack] = await Promise.all([
        runLoad(attackNumbers.length, ATTACK_IN_FLIGHT, async (i) => {
          try {
            await guarded.stack.msgflow.sendOtp({ purpose: 'login', recipient: attackNumbers[i]! });
            reached += 1;
          } catch (error) {
            if (!(error instanceof OtpBlockedError)) throw error;
            reasons[error.reason] = (reasons[error.reason] ?? 0) + 1;
          }
        }),
        runLoad(morePeople.length, LOGINS_IN_FLIGHT, async (i) => {
          duringAttack.push(await login(guarded.stack, morePeople[i]!));
        }),
      ]);
      const attackSeconds = (performance.now() - started) / 1000;
      if (attack.failures > 0) throw new Error(`attack attempts failed otherwise: ${attack.firstFailure}`);

      const logins = [...on, ...duringAttack];
      const peopleBlocked = logins.filter((l) => l.blocked).length;
      const sendsOn = on.filter((l) => !l.blocked).map((l) => l.sendMs);
      const sendsOff = off.map((l) => l.sendMs);
      const ratio = percentile(sendsOn, 50) / percentile(sendsOff, 50);
      return {
        title: 'OTP fraud guard (default rules): a pumping attack beside real logins',
        rows: [
          {
            case: 'attack',
            attempts: ATTACK_ATTEMPTS,
            'reached provider': reached,
            share: `${round((100 * reached) / ATTACK_ATTEMPTS, 2)}%`,
            blocked: Object.entries(reasons)
              .map(([reason, n]) => `${reason} ${n}`)
              .join(', '),
            seconds: round(attackSeconds),
          },
          {
            case: 'people logging in',
            attempts: logins.length,
            'reached provider': logins.length - peopleBlocked,
            share: `${round((100 * peopleBlocked) / logins.length, 2)}% blocked`,
            blocked: peopleBlocked,
            seconds: '',
          },
          latencyRow('sendOtp, guard on', sendsOn),
          latencyRow('sendOtp, guard off (ceiling)', sendsOff),
        ],
        notes: [
          `attack: ${ATTACK_PREFIXES.length} prefixes of NG, GH, KE (allowed), sequential numbers, never verified, ${ATTACK_IN_FLIGHT} in flight, within ${round(attackSeconds)} s (target: ≤ 5 % reach the provider)`,
          `people: ${logins.length} logins over ${PEOPLES_COUNTRIES.join(', ')}, each in its own prefix, code read from the inbox and verified; ${LOGINS} of them during the attack (target: 0 blocked)`,
          `sendOtp p50 with the guard ÷ without: ${round(ratio, 3)}× (target ≤ 1.05×), ${LOGINS} logins each, alternating between the two workers`,
          'rules: the defaults (10 sends per prefix per 10 minutes; a prefix with 5 sends in the last hour, fewer than 1 in 5 verified, gets none for that hour); real windows',
          'two stacks (sandbox, ingress in this process, `msgflow worker` in its own process, SQLite store) on one Temporal dev server',
        ],
      };
    } finally {
      await Promise.all([guarded.close(), unguarded.close()]);
    }
  },
};

function stackFor(context: BenchContext, name: string, workerEnv: Record<string, string>): Promise<OtpBenchStack> {
  return startOtpBenchStack(
    context,
    {
      taskQueue: `bench-otp-fraud-${name}-${randomUUID()}`,
      sandbox: { ...BENCH_SANDBOX, otpPerIpPerMinute: 1_000_000, log: () => {} },
      ratePerMinute: 1_000_000,
      initialBalance: 1_000_000_000,
    },
    workerEnv,
  );
}

interface Login {
  sendMs: number;
  blocked: boolean;
}

async function login(stack: RunningStack, recipient: string): Promise<Login> {
  const t0 = performance.now();
  try {
    await stack.msgflow.sendOtp({ purpose: 'login', recipient });
  } catch (error) {
    if (error instanceof OtpBlockedError) return { sendMs: performance.now() - t0, blocked: true };
    throw error;
  }
  const sendMs = performance.now() - t0;
  const code = (await stack.admin.inbox(recipient))[0]!.text.match(/\b(\d{4,10})\b/)![1]!;
  const answer = await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code });
  if (answer.status !== 'verified') throw new Error(`verify answered ${answer.status}`);
  return { sendMs, blocked: false };
}

/** People's numbers, round robin over the countries, each in a prefix of its own. */
function peopleNumbers(count: number, from = 0): string[] {
  const perCountry = PEOPLES_COUNTRIES.map((country) =>
    spreadNumbers(Math.ceil(count / PEOPLES_COUNTRIES.length), country, from),
  );
  return Array.from(
    { length: count },
    (_, i) => perCountry[i % perCountry.length]![Math.floor(i / perCountry.length)]!,
  );
}

/** The attack's numbers: each prefix walked in order, the prefixes interleaved as a script spreads its load. */
function attackList(count: number): string[] {
  const perPrefix = ATTACK_PREFIXES.map(([country, prefix]) =>
    sequentialNumbers(Math.ceil(count / ATTACK_PREFIXES.length), country, prefix),
  );
  return Array.from({ length: count }, (_, i) => perPrefix[i % perPrefix.length]![Math.floor(i / perPrefix.length)]!);
}

function latencyRow(name: string, sends: number[]) {
  return {
    case: name,
    attempts: sends.length,
    'reached provider': '',
    share: '',
    blocked: `p50 ${round(percentile(sends, 50))} ms, p99 ${round(percentile(sends, 99))} ms`,
    seconds: '',
  };
}
