/** `msgflow otp send|verify|status` as real processes against the real stack: exit codes, output, bad input. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { generateOtpKeys } from '../../src/crypto/otp-keys.js';
import { VOICE_MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const root = resolve(import.meta.dirname, '../..');
const tsx = join(root, 'node_modules/.bin/tsx');
const main = join(root, 'src/cli/main.ts');
// A directory of its own, so no .data/dev.env of a developer's `msgflow dev` run leaks in.
const cwd = mkdtempSync(join(tmpdir(), 'otp-cli-'));
const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('MSGFLOW_') && !k.startsWith('TEMPORAL_')),
);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string>, stdin?: string): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(tsx, [main, ...args], { cwd, env: { ...baseEnv, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

describe('msgflow otp', () => {
  const otp = generateOtpKeys();
  let stack: RunningStack;
  let env: Record<string, string>;

  beforeAll(async () => {
    stack = await startTestStack({ otpKeys: otp.keys, sandbox: { otpPerIpPerMinute: 10_000 } });
    const temporal = inject('temporal');
    env = {
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      MSGFLOW_TASK_QUEUE: stack.taskQueue,
      ...otp.env,
    };
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it(
    'sends a code, refuses a wrong one with exit status 3, verifies the right one from stdin',
    { timeout: 120_000 },
    async () => {
      const recipient = '2348012345680';
      const sent = await run(['otp', 'send', '--purpose', 'login', '--to', `+${recipient}`, '--cooldown', '1m'], env);
      expect(sent.stderr).toBe('');
      expect(sent.code).toBe(0);
      expect(sent.stdout).toMatch(/^sent {2}sends 1 \(2 left\)/);
      expect(sent.stdout).toContain('workflow otp:login:');
      const code = (await stack.admin.inbox(recipient))[0]!.text.match(/\d{6}/)![0];
      expect(sent.stdout).not.toContain(code);
      expect(sent.stdout).not.toContain(recipient);

      const status = await run(['otp', 'status', '--purpose', 'login', '--to', recipient], env);
      expect(JSON.parse(status.stdout)).toMatchObject({ status: 'pending', sends: 1, attemptsRemaining: 5 });

      const wrongCode = code === '000000' ? '111111' : '000000';
      const wrong = await run(['otp', 'verify', '--purpose', 'login', '--to', recipient, '--code', wrongCode], env);
      expect(wrong).toMatchObject({ code: 3, stdout: 'invalid  attempts remaining 4\n' });

      const right = await run(['otp', 'verify', '--purpose', 'login', '--to', recipient], env, `${code}\n`);
      expect(right).toMatchObject({ code: 0, stdout: 'verified  attempts remaining 4\n' });

      const after = await run(['otp', 'status', '--purpose', 'login', '--to', recipient], env);
      expect(after.stdout).toBe('no running session\n');
    },
  );

  it('names what is wrong: bad input and a missing key exit 2', { timeout: 60_000 }, async () => {
    const bad = await run(['otp', 'verify', '--purpose', 'login', '--to', '2348012345681', '--code', '12ab'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/code/);

    const { MSGFLOW_OTP_HASH_KEY: _omitted, ...withoutHashKey } = env;
    const unconfigured = await run(['otp', 'send', '--purpose', 'login', '--to', '2348012345681'], withoutHashKey);
    expect(unconfigured.code).toBe(2);
    expect(unconfigured.stderr).toContain('MSGFLOW_OTP_HASH_KEY');
  });

  it(
    "names the channels: a call follows an unverified text, and status shows the call's final state from the store",
    { timeout: 120_000 },
    async () => {
      // The sandbox's call to this number is never answered: the state only polling the call can tell.
      const recipient = VOICE_MAGIC_NUMBERS.no_answer;
      const args = ['otp', 'send', '--purpose', 'login', '--to', recipient];
      const unknown = await run([...args, '--channels', 'sms,fax'], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('"fax" is not a channel (sms or voice)');
      const voiceFirst = await run([...args, '--channels', 'voice'], env);
      expect(voiceFirst.code).toBe(2);
      expect(voiceFirst.stderr).toContain('the first channel must be sms');
      expect(await stack.admin.inbox(recipient)).toEqual([]);

      const sent = await run([...args, '--channels', 'sms,voice', '--channel-timeout', '1s'], env);
      expect(sent.code).toBe(0);
      const call = await waitFor(
        async () => (await stack.admin.inbox(recipient)).find((e) => e.kind === 'voice'),
        'the voice call',
        { timeoutMs: 30_000 },
      );
      // The session follows its call to the end: `otp status` shows the final state, once it is known.
      const attemptsOf = async () =>
        JSON.parse((await run(['otp', 'status', '--purpose', 'login', '--to', recipient, '--json'], env)).stdout)
          .channelAttempts as Array<{ channel: string; id: string; outcome: string }>;
      const attempts = await waitFor(
        async () => {
          const found = await attemptsOf();
          return found.at(-1)?.outcome === 'placed' ? undefined : found;
        },
        "the call's final state in otp status",
        { timeoutMs: 60_000 },
      );
      expect(attempts).toEqual([
        expect.objectContaining({ channel: 'sms', outcome: 'delivered' }),
        expect.objectContaining({ channel: 'voice', id: call.provider_message_id, outcome: 'no_answer' }),
      ]);
      // The same final state is in the message store, asked of the provider, with the number called.
      const stored = await stack.store.message(call.provider_message_id);
      expect(stored?.final).toMatchObject({ status: 'no_answer', source: 'provider' });
      expect(stored?.number).toBe(`+${recipient}`);
      const status = await run(['otp', 'status', '--purpose', 'login', '--to', recipient], env);
      expect(status.stdout).not.toContain(call.code!);
    },
  );

  it(
    'says a locked session is locked, until when, and exits 5 instead of reporting a send',
    { timeout: 120_000 },
    async () => {
      const recipient = '2348012345683';
      const pair = ['--purpose', 'login', '--to', recipient];
      const sent = await run(
        ['otp', 'send', ...pair, '--max-attempts', '1', '--lockout', '10m', '--cooldown', '1s'],
        env,
      );
      expect(sent.code).toBe(0);
      const code = (await stack.admin.inbox(recipient))[0]!.text.match(/\d{6}/)![0];
      const wrong = await run(['otp', 'verify', ...pair, '--code', code === '000000' ? '111111' : '000000'], env);
      expect(wrong).toMatchObject({ code: 3, stdout: 'locked  attempts remaining 0\n' });

      const locked = await run(['otp', 'send', ...pair], env);
      expect(locked.code).toBe(5);
      expect(locked.stdout).toMatch(/^locked until \d{4}-\d\d-\d\dT[\d:.]+Z\nworkflow otp:login:/);
      expect(locked.stdout).not.toMatch(/left|resend/);
      const until = Date.parse(locked.stdout.split('\n')[0]!.slice('locked until '.length));
      expect(until).toBeGreaterThan(Date.now() + 5 * 60_000);
      const json = await run(['otp', 'send', ...pair, '--json'], env);
      expect(json.code).toBe(5);
      expect(JSON.parse(json.stdout)).toMatchObject({ status: 'locked', lockedUntil: expect.any(String) });
      expect((await stack.admin.inbox(recipient)).length).toBe(1);
    },
  );
});
