/**
 * The OTP fraud guard end to end: real sessions through the facade, the real sandbox and the worker's guard
 * on the message store. Each rule (one purpose each, in prefixes of their own) blocks the send it should
 * with OtpBlockedError, before the provider sees it (nothing in its ledger); monitor mode flags and sends;
 * the allow and deny lists win; `msgflow otp send` prints the block; and `msgflow otp guard backtest` with
 * the live rules replays the recorded history to the live decisions; `msgflow otp guard report --by channel`
 * counts a fallback call by its final state, which the session's poll wrote to the store.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otpGuardConfig, type OtpGuardRulesFile } from '../../src/api/otp-guard.js';
import type { RunningStack } from '../../src/stack.js';
import { generateOtpKeys } from '../../src/crypto/otp-keys.js';
import { OtpBlockedError, otpWorkflowId } from '../../src/starter/otp.js';
import { VOICE_MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import { backtest } from '../../src/store/otp-guard-replay.js';
import { waitFor } from '../support/wait-for.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { startTestStack } from '../support/stack.js';

const RULES: OtpGuardRulesFile = {
  prefixVelocity: null,
  conversion: null,
  deny: ['+2348069000001'],
  purposes: {
    velocity: { prefixVelocity: { digits: 4, max: 2, window: '10m' } },
    country: { countries: { mode: 'allow', list: ['NG', 'GH'] }, allow: ['254790000001'] },
    busy: { countryVelocity: { max: 2, window: '1h' } },
    conversion: { conversion: { minRate: 0.5, minSends: 3, coolOff: '1h' } },
    watch: { monitor: true, prefixVelocity: { digits: 4, max: 1, window: '10m' } },
  },
};

const folder = mkdtempSync(join(tmpdir(), 'otp-guard-'));
const rulesFile = join(folder, 'rules.yaml');

describe('the OTP fraud guard', () => {
  const otp = generateOtpKeys();
  let stack: RunningStack;

  beforeAll(async () => {
    writeFileSync(rulesFile, JSON.stringify(RULES));
    stack = await startTestStack({
      otpKeys: otp.keys,
      otpGuard: otpGuardConfig(RULES),
      store: { file: join(folder, 'store.db') },
      sandbox: { otpPerIpPerMinute: 10_000 },
    });
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const send = (purpose: string, recipient: string) => stack.msgflow.sendOtp({ purpose, recipient });

  /** The send is refused with OtpBlockedError(reason), its session failed, and the provider never saw it. */
  async function expectBlocked(purpose: string, recipient: string, reason: string) {
    const error = await send(purpose, recipient).catch((e: unknown) => e);
    expect(error, `${purpose} ${recipient}`).toBeInstanceOf(OtpBlockedError);
    expect((error as OtpBlockedError).reason).toBe(reason);
    const handle = stack.temporal.workflow.getHandle(otpWorkflowId(stack.otpKeys.hashKey, purpose, recipient));
    expect(await handle.result()).toMatchObject({ status: 'failed', sends: 0, failure: 'OtpBlocked' });
    const ledger = await stack.admin.ledger(stack.accountId!);
    expect(ledger.some((e) => e.recipient === `+${recipient}`)).toBe(false);
    return error as OtpBlockedError;
  }

  async function verify(purpose: string, recipient: string) {
    const [newest] = await stack.admin.inbox(recipient);
    const code = newest?.text.match(/\b(\d{4,10})\b/)?.[1];
    expect(code, `code for ${recipient}`).toBeDefined();
    expect((await stack.msgflow.verifyOtp({ purpose, recipient, code: code! })).status).toBe('verified');
  }

  it('blocks a prefix past its velocity, saying when to try again', async () => {
    expect((await send('velocity', '2348061000001')).status).toBe('sent');
    expect((await send('velocity', '2348061000002')).status).toBe('sent');
    const blocked = await expectBlocked('velocity', '2348061000003', 'prefix_velocity');
    expect(blocked.retryAfterSeconds).toBeGreaterThan(500);
    expect(blocked.retryAfterSeconds).toBeLessThanOrEqual(600);
    expect((await send('velocity', '2348062000001')).status).toBe('sent');
  });

  it('blocks countries not allowed, unless the number is on the allow list', async () => {
    expect((await send('country', '233241000001')).status).toBe('sent');
    expect((await expectBlocked('country', '254790000002', 'country_not_allowed')).retryAfterSeconds).toBeNull();
    expect((await send('country', '254790000001')).status).toBe('sent');
  });

  it('blocks a country past its velocity', async () => {
    expect((await send('busy', '5511987650001')).status).toBe('sent');
    expect((await send('busy', '5521987650001')).status).toBe('sent');
    await expectBlocked('busy', '5531987650001', 'country_velocity');
  });

  it('blocks a prefix whose codes are not verified, and not one whose codes are', async () => {
    for (const n of [1, 2, 3]) expect((await send('conversion', `23324310000${n}`)).status).toBe('sent');
    await expectBlocked('conversion', '233243100009', 'low_conversion');
    for (const n of [1, 2, 3]) {
      await send('conversion', `23324420000${n}`);
      await verify('conversion', `23324420000${n}`);
    }
    expect((await send('conversion', '233244200009')).status).toBe('sent');
  });

  it('blocks a number on the deny list whatever its purpose', async () => {
    await expectBlocked('login', '2348069000001', 'deny_list');
  });

  it('in monitor mode, sends and records what it would have blocked', async () => {
    expect((await send('watch', '2348063000001')).status).toBe('sent');
    expect((await send('watch', '2348063000002')).status).toBe('sent');
    const [flagged] = (await stack.store.otp.history(0)).filter((e) => e.number === '2348063000002');
    expect(flagged).toMatchObject({ verdict: 'monitored', reason: 'prefix_velocity', cost: expect.any(Number) });
  });

  it('`msgflow otp send` prints the block and exits 4; the backtest with the live rules reaches the live decisions', async () => {
    const env = { ...cliEnvFor(stack), MSGFLOW_STORE_FILE: join(folder, 'store.db'), ...otp.env };
    const blocked = await runMsgflow(['otp', 'send', '--purpose', 'login', '--to', '2348069000001'], {
      cwd: folder,
      env,
    });
    expect(blocked).toMatchObject({ code: 4, stdout: 'blocked deny_list\n' });

    const history = await stack.store.otp.history(0);
    const sends = history.filter((e) => e.kind === 'send');
    expect(sends.length).toBeGreaterThan(15);
    const replayed = backtest(otpGuardConfig(RULES), history);
    for (const event of sends) {
      expect(replayed.decisions.get(event.seq), `send ${event.seq}`).toMatchObject({
        verdict: event.verdict,
        reason: event.reason,
      });
    }
    const report = await runMsgflow(['otp', 'guard', 'backtest', '--rules', rulesFile, '--since', '1h', '--json'], {
      cwd: folder,
      env,
    });
    expect(report.code, report.stderr).toBe(0);
    const summary = JSON.parse(report.stdout) as { wouldBlock: Record<string, number>; liveBlockedWouldSend: number };
    const liveBlocked = sends.filter((e) => e.verdict === 'blocked').length;
    expect(Object.values(summary.wouldBlock).reduce((a, b) => a + b, 0)).toBe(liveBlocked);
    expect(summary.liveBlockedWouldSend).toBe(0);
  });

  it("`msgflow otp guard report --by channel` counts a call by the final state the session's poll stored", async () => {
    // This suite's only call: to the sandbox's never-answered number, after its delivered text's channel timeout.
    const recipient = VOICE_MAGIC_NUMBERS.no_answer;
    const purpose = 'fallback';
    await stack.msgflow.sendOtp({ purpose, recipient, channels: ['sms', 'voice'], channelTimeoutSeconds: 1 });
    await waitFor(
      async () => (await stack.msgflow.otpState({ purpose, recipient }))?.channelAttempts?.[1]?.outcome === 'no_answer',
      "the call's final state",
      { timeoutMs: 30_000 },
    );
    await verify(purpose, recipient);
    const env = { ...cliEnvFor(stack), MSGFLOW_STORE_FILE: join(folder, 'store.db'), ...otp.env };
    const report = await runMsgflow(['otp', 'guard', 'report', '--by', 'channel', '--since', '1h', '--json'], {
      cwd: folder,
      env,
    });
    expect(report.code, report.stderr).toBe(0);
    const rows = JSON.parse(report.stdout) as Array<{ channel: string; sent: number; reached: number }>;
    expect(rows.find((r) => r.channel === 'voice')).toEqual({
      channel: 'voice',
      sent: 1,
      reached: 0,
      sessions: 1,
      verifiedSessions: 1,
    });
    // Texts reach the person in this sandbox unless their number says otherwise: the store knows it by webhook.
    const texts = rows.find((r) => r.channel === 'sms')!;
    expect(texts.reached).toBeGreaterThan(0);
    expect(texts.reached).toBeLessThanOrEqual(texts.sent);
    const human = await runMsgflow(['otp', 'guard', 'report', '--by', 'channel', '--since', '1h'], {
      cwd: folder,
      env,
    });
    expect(human.stdout).toMatch(/^channel {2}sent {2}reached {2}sessions {2}verified {2}conversion\n/);
    expect(human.stdout).toMatch(/\nvoice +1 +0 +1 +1 +100%\n/);
  });
});
