/**
 * `msgflow otp send|verify|status`: OTP sessions from the command line, through the same facade backend
 * services use. Needs MSGFLOW_OTP_HASH_KEY and a seal key (MSGFLOW_OTP_SEAL_KEY or MSGFLOW_ENCRYPTION_KEY);
 * `msgflow dev` writes them to .data/dev.env. The code is never printed; pass it with --code or on stdin
 * (keeps it out of the shell history).
 */
import { text } from 'node:stream/consumers';
import { type Command, InvalidArgumentError } from 'commander';
import { OtpChannel } from '../api/otp.js';
import { parseEnv, WorkerEnv } from '../config.js';
import { Msgflow } from '../starter/index.js';
import { otpKeysFromEnv } from '../crypto/otp-keys.js';
import { OtpBlockedError } from '../starter/otp.js';
import { withClient } from './client.js';
import { durationInSeconds, type JsonFlag, positiveInt, printResult, started, withJson } from './common.js';
import { registerOtpGuardCommands } from './otp-guard.js';

/** Exit status of `otp verify` when the answer is anything but `verified` (errors exit 1, bad config 2). */
export const NOT_VERIFIED_EXIT_CODE = 3;
/** Exit status of `otp send` when the fraud guard blocked the send. */
export const BLOCKED_EXIT_CODE = 4;
/** Exit status of `otp send` when the session is locked after too many wrong codes: nothing was sent. */
export const LOCKED_EXIT_CODE = 5;

interface PairOptions extends JsonFlag {
  purpose: string;
  to: string;
}

interface SendOptions extends PairOptions {
  sender?: string;
  length?: number;
  /** Seconds, from durations. */
  ttl?: number;
  maxAttempts?: number;
  cooldown?: number;
  maxSends?: number;
  lockout?: number;
  channels?: OtpChannel[];
  channelTimeout?: number;
}

/** `--channels sms,voice`: the channels in order (the session's input checks their order). */
function channelList(value: string): OtpChannel[] {
  return value.split(',').map((name) => {
    const parsed = OtpChannel.safeParse(name.trim());
    if (!parsed.success) throw new InvalidArgumentError(`"${name.trim()}" is not a channel (sms or voice)`);
    return parsed.data;
  });
}

const digitsOf = (to: string) => to.trim().replace(/^\+/, '');

async function withMsgflow<T>(use: (msgflow: Msgflow) => Promise<T>): Promise<T> {
  const otpKeys = otpKeysFromEnv();
  const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, process.env);
  // Input the facade refuses (a code that is not 4-10 digits, voice as the first channel) exits 2.
  return withClient((client) => started(use(new Msgflow(client, MSGFLOW_TASK_QUEUE, { otpKeys }))));
}

export function registerOtpCommands(otp: Command): void {
  registerOtpGuardCommands(otp);
  const pair = (command: Command) =>
    command
      .requiredOption('--purpose <purpose>', 'what the code is for, e.g. login (lowercase letters, digits, _ or -)')
      .requiredOption('--to <number>', 'recipient, international digits (e.g. 2348012345678)');

  withJson(pair(otp.command('send')))
    .description(
      `Send a code (or resend, within the cooldown and send limit, when a session is running); exits ${BLOCKED_EXIT_CODE} when the fraud guard blocks it, ${LOCKED_EXIT_CODE} when the session is locked`,
    )
    .option('--sender <id>', 'approved sender id (default: the provider’s verification sender)')
    .option('--length <digits>', 'digits in the code (4-10, default 6)', positiveInt('--length'))
    .option('--ttl <duration>', 'lifetime of a code, e.g. 5m (default 10m)', durationInSeconds)
    .option('--max-attempts <n>', 'wrong codes before the session locks (default 5)', positiveInt('--max-attempts'))
    .option('--cooldown <duration>', 'minimum time between sends, e.g. 1m (default 30s)', durationInSeconds)
    .option('--max-sends <n>', 'sends per session, the first included (default 3)', positiveInt('--max-sends'))
    .option(
      '--lockout <duration>',
      'how long a locked session refuses codes and sends (default 15m)',
      durationInSeconds,
    )
    .option('--channels <list>', 'how the code reaches the person, in order, e.g. sms,voice (default sms)', channelList)
    .option(
      '--channel-timeout <duration>',
      'how long after a delivered text the next channel waits for a verification (default 30s)',
      durationInSeconds,
    )
    .action(async (options: SendOptions) => {
      const answer = await withMsgflow((msgflow) =>
        msgflow.sendOtp({
          purpose: options.purpose,
          recipient: digitsOf(options.to),
          sender: options.sender,
          length: options.length,
          ttlSeconds: options.ttl,
          maxAttempts: options.maxAttempts,
          resendCooldownSeconds: options.cooldown,
          maxSends: options.maxSends,
          lockoutSeconds: options.lockout,
          channels: options.channels,
          channelTimeoutSeconds: options.channelTimeout,
        }),
      ).catch((error: unknown) => {
        if (!(error instanceof OtpBlockedError)) throw error;
        const { reason, retryAfterSeconds } = error;
        printResult(options, { status: 'blocked', reason, retryAfterSeconds }, () =>
          retryAfterSeconds === null ? `blocked ${reason}` : `blocked ${reason}  retry after ${retryAfterSeconds} s`,
        );
        process.exitCode = BLOCKED_EXIT_CODE;
        return null;
      });
      if (!answer) return;
      if (answer.status === 'locked') {
        // Nothing was sent: the session's counters and resend time would only mislead.
        printResult(options, answer, () => [
          answer.lockedUntil ? `locked until ${answer.lockedUntil}` : 'locked (too many wrong codes)',
          `workflow ${answer.workflowId}`,
        ]);
        process.exitCode = LOCKED_EXIT_CODE;
        return;
      }
      printResult(options, answer, () => [
        `${answer.status}  sends ${answer.sends} (${answer.sendsRemaining} left)  expires ${answer.expiresAt ?? '-'}`,
        ...(answer.resendAvailableAt ? [`resend available at ${answer.resendAvailableAt}`] : []),
        ...(answer.lockedUntil ? [`locked until ${answer.lockedUntil}`] : []),
        `workflow ${answer.workflowId}`,
      ]);
    });

  withJson(pair(otp.command('verify')))
    .description(`Check a code; exits 0 when verified, ${NOT_VERIFIED_EXIT_CODE} otherwise`)
    .option('--code <digits>', 'the code (read from stdin when omitted)')
    .action(async (options: PairOptions & { code?: string }) => {
      const code = options.code ?? (await text(process.stdin)).trim();
      const answer = await withMsgflow((msgflow) =>
        msgflow.verifyOtp({ purpose: options.purpose, recipient: digitsOf(options.to), code }),
      );
      printResult(options, answer, () => `${answer.status}  attempts remaining ${answer.attemptsRemaining}`);
      if (answer.status !== 'verified') process.exitCode = NOT_VERIFIED_EXIT_CODE;
    });

  withJson(pair(otp.command('status')))
    .description("Show the running session's state (no code, no number)")
    .action(async (options: PairOptions) => {
      const state = await withMsgflow((msgflow) =>
        msgflow.otpState({ purpose: options.purpose, recipient: digitsOf(options.to) }),
      );
      // The human form is the state itself (JSON); --json prints null when no session runs.
      printResult(options, state ?? null, () => (state ? JSON.stringify(state, null, 2) : 'no running session'));
    });
}
