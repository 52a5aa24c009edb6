/**
 * `msgflow otp send|verify|status`: OTP sessions from the command line, through the same facade backend
 * services use. Needs MSGFLOW_OTP_HASH_KEY and a seal key (MSGFLOW_OTP_SEAL_KEY or MSGFLOW_ENCRYPTION_KEY);
 * `msgflow dev` writes them to .data/dev.env. The code is never printed; pass it with --code or on stdin
 * (keeps it out of the shell history).
 */
import { text } from 'node:stream/consumers';
import type { Command } from 'commander';
import { parseEnv, TemporalEnv, WorkerEnv } from '../config.js';
import { Msgflow, otpKeysFromEnv } from '../starter/index.js';
import { connectClient } from '../temporal/connection.js';

/** Exit status of `otp verify` when the answer is anything but `verified` (errors exit 1, bad config 2). */
export const NOT_VERIFIED_EXIT_CODE = 3;

interface PairOptions {
  purpose: string;
  to: string;
}

interface SendOptions extends PairOptions {
  sender?: string;
  length?: string;
  ttl?: string;
  maxAttempts?: string;
  cooldown?: string;
  maxSends?: string;
  lockout?: string;
}

const digitsOf = (to: string) => to.trim().replace(/^\+/, '');
const numberOrUndefined = (value: string | undefined) => (value === undefined ? undefined : Number(value));

async function withMsgflow<T>(use: (msgflow: Msgflow) => Promise<T>): Promise<T> {
  const otpKeys = otpKeysFromEnv();
  const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, process.env);
  const client = await connectClient(parseEnv(TemporalEnv, process.env));
  try {
    return await use(new Msgflow(client, MSGFLOW_TASK_QUEUE, { otpKeys }));
  } finally {
    await client.connection.close();
  }
}

export function registerOtpCommands(program: Command): void {
  const otp = program.command('otp').description('One-time passwords: durable send-then-verify sessions');
  const pair = (command: Command) =>
    command
      .requiredOption('--purpose <purpose>', 'what the code is for, e.g. login (lowercase letters, digits, _ or -)')
      .requiredOption('--to <number>', 'recipient, international digits (e.g. 2348012345678)');

  pair(otp.command('send'))
    .description('Send a code (or resend, within the cooldown and send limit, when a session is running)')
    .option('--sender <id>', 'approved sender id (default: the provider’s verification sender)')
    .option('--length <digits>', 'digits in the code (4-10, default 6)')
    .option('--ttl <seconds>', 'lifetime of a code (default 600)')
    .option('--max-attempts <n>', 'wrong codes before the session locks (default 5)')
    .option('--cooldown <seconds>', 'minimum time between sends (default 30)')
    .option('--max-sends <n>', 'sends per session, the first included (default 3)')
    .option('--lockout <seconds>', 'how long a locked session refuses codes and sends (default 900)')
    .action(async (options: SendOptions) => {
      const answer = await withMsgflow((msgflow) =>
        msgflow.sendOtp({
          purpose: options.purpose,
          recipient: digitsOf(options.to),
          sender: options.sender,
          length: numberOrUndefined(options.length),
          ttlSeconds: numberOrUndefined(options.ttl),
          maxAttempts: numberOrUndefined(options.maxAttempts),
          resendCooldownSeconds: numberOrUndefined(options.cooldown),
          maxSends: numberOrUndefined(options.maxSends),
          lockoutSeconds: numberOrUndefined(options.lockout),
        }),
      );
      console.log(
        `${answer.status}  sends ${answer.sends} (${answer.sendsRemaining} left)  expires ${answer.expiresAt ?? '-'}`,
      );
      if (answer.resendAvailableAt) console.log(`resend available at ${answer.resendAvailableAt}`);
      if (answer.lockedUntil) console.log(`locked until ${answer.lockedUntil}`);
      console.log(`workflow ${answer.workflowId}`);
    });

  pair(otp.command('verify'))
    .description(`Check a code; exits 0 when verified, ${NOT_VERIFIED_EXIT_CODE} otherwise`)
    .option('--code <digits>', 'the code (read from stdin when omitted)')
    .action(async (options: PairOptions & { code?: string }) => {
      const code = options.code ?? (await text(process.stdin)).trim();
      const answer = await withMsgflow((msgflow) =>
        msgflow.verifyOtp({ purpose: options.purpose, recipient: digitsOf(options.to), code }),
      );
      console.log(`${answer.status}  attempts remaining ${answer.attemptsRemaining}`);
      if (answer.status !== 'verified') process.exitCode = NOT_VERIFIED_EXIT_CODE;
    });

  pair(otp.command('status'))
    .description("Show the running session's state (no code, no number)")
    .action(async (options: PairOptions) => {
      const state = await withMsgflow((msgflow) =>
        msgflow.otpState({ purpose: options.purpose, recipient: digitsOf(options.to) }),
      );
      console.log(state ? JSON.stringify(state, null, 2) : 'no running session');
    });
}
