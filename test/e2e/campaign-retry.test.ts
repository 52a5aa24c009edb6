/**
 * Resending a campaign to its recipients that failed, against the real stack (Temporal dev server, sandbox,
 * worker, a SQLite store shared with the CLI): the sandbox's magic numbers force each final state, and the
 * retry reaches only the failed and undelivered (the expired one was suppressed since; the delivered, the
 * rejected and the invalid entry never), charged for them alone, once however often it is asked.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { preflightEstimate } from '../../src/starter/campaign-retry.js';
import { KeyReusedError } from '../../src/starter/start-once.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { startTestStack } from '../support/stack.js';

const dir = mkdtempSync(join(tmpdir(), 'campaign-retry-'));
const plus = (digits: string) => `+${digits}`;
const OTHER = '2348030000031';

describe('msgflow campaign retry', () => {
  let stack: RunningStack;
  let env: Record<string, string>;
  const msgflow = (...args: string[]) => runMsgflow(args, { cwd: dir, env });
  const smsCharges = async () =>
    (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms').map((e) => e.recipient);
  const texts = async (digits: string) => (await stack.admin.inbox(digits)).map((m) => m.text);

  beforeAll(async () => {
    const file = join(dir, 'msgflow.db');
    stack = await startTestStack({ store: { file } });
    env = { ...cliEnvFor(stack), MSGFLOW_STORE_FILE: file };
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'sends only to the failed and undelivered, shows the price first, and is the same run when asked again',
    { timeout: 180_000 },
    async () => {
      const key = `retry-${Date.now()}`;
      const audience = join(dir, 'audience.txt');
      const numbers = [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered, MAGIC_NUMBERS.failed];
      const others = [MAGIC_NUMBERS.rejected, MAGIC_NUMBERS.expired, OTHER];
      writeFileSync(audience, [...numbers, 'call me', ...others].map((n) => `${n}\n`).join(''));
      const sent = await msgflow(
        'campaign',
        'start',
        '--key',
        key,
        '--sender',
        'ACME',
        '--message',
        'Your payment is due',
        '--file',
        audience,
        '--wait',
        '--json',
      );
      expect(sent.stderr).toBe('');
      expect(JSON.parse(sent.stdout)).toMatchObject({ sent: 6, invalid: { count: 1 } });
      const chargedFirst = await smsCharges();
      expect(chargedFirst).toHaveLength(6);
      // Opted out since: never sent to again, though its message expired.
      await stack.store.suppress([{ number: plus(MAGIC_NUMBERS.expired) }]);

      const retry = await msgflow('campaign', 'retry', key, '--wait');
      expect(retry.stderr).toBe('');
      expect(retry.code).toBe(0);
      const lines = retry.stdout.trim().split('\n');
      // The count and price first (the suppressed number is counted, and left out when its chunk is read).
      expect(lines[0]).toMatch(
        new RegExp(`^retry campaign:${key}:retry of ${key}: 3 recipient\\(s\\), 3 segment\\(s\\), price 9 USD`),
      );
      expect(retry.stdout).toContain(`campaign:${key}:retry completed: 2 sent in 1 chunk(s), cost 6 USD`);
      expect(retry.stdout).toContain('suppressed (opted out, not sent): 1');

      const charged = (await smsCharges()).slice(chargedFirst.length);
      expect(charged.sort()).toEqual([plus(MAGIC_NUMBERS.undelivered), plus(MAGIC_NUMBERS.failed)].sort());
      expect(await texts(MAGIC_NUMBERS.failed)).toEqual(['Your payment is due', 'Your payment is due']);
      expect(await texts(MAGIC_NUMBERS.undelivered)).toHaveLength(2);
      for (const once of [MAGIC_NUMBERS.delivered, ...others]) expect(await texts(once)).toHaveLength(1);

      // Asked again: the same run, its result, nothing sent.
      const runId = (await stack.temporal.workflow.getHandle(`campaign:${key}:retry`).describe()).runId;
      const again = await msgflow('campaign', 'retry', key, '--wait', '--json');
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({
        workflowId: `campaign:${key}:retry`,
        retryOf: key,
        estimate: { recipients: 3 },
        sent: 2,
        suppressed: 1,
      });
      expect((await stack.temporal.workflow.getHandle(`campaign:${key}:retry`).describe()).runId).toBe(runId);
      expect(await smsCharges()).toHaveLength(8);

      // Each names the other.
      expect((await msgflow('campaign', 'status', key)).stdout).toContain(`retried by ${key}:retry`);
      expect((await msgflow('campaign', 'status', `${key}:retry`)).stdout).toContain(`retry of ${key}`);
      const report = JSON.parse((await msgflow('campaign', 'report', `${key}:retry`, '--json')).stdout);
      expect(report).toMatchObject({ retryOf: key, retriedBy: null });
      expect(report.rows).toHaveLength(2);
      const firstReport = await msgflow('campaign', 'report', key);
      expect(firstReport.stderr).toContain(`campaign ${key}: retried by ${key}:retry`);

      // Other settings are another input: refused, with the key named (exit status 2).
      const changed = await msgflow('campaign', 'retry', key, '--message', 'Last reminder');
      expect(changed.code).toBe(2);
      expect(changed.stderr).toContain(`key "${key}:retry" was already used with another input`);
      const badState = await msgflow('campaign', 'retry', key, '--status', 'delivered');
      expect(badState.code).toBe(2);
      expect(badState.stderr).toContain('"delivered" cannot be retried');
      const withAudience = await msgflow('campaign', 'retry', key, '--to', plus(OTHER));
      expect(withAudience.code).toBe(2);
      expect(await smsCharges()).toHaveLength(8);
    },
  );

  it(
    'is refused while the first campaign runs, and for a campaign the store does not know',
    { timeout: 60_000 },
    async () => {
      const key = `retry-running-${Date.now()}`;
      const started = await msgflow(
        'campaign',
        'start',
        '--key',
        key,
        '--sender',
        'ACME',
        '--message',
        'Your payment is due',
        '--to',
        plus(MAGIC_NUMBERS.neverFinal),
        '--wait-window',
        '10m',
      );
      expect(started.code).toBe(0);
      const refused = await msgflow('campaign', 'retry', key);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain(`campaign ${key} is still running`);
      await stack.temporal.workflow.getHandle(`campaign:${key}`).terminate('test over');

      const unknown = await msgflow('campaign', 'retry', 'no-such-campaign');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('keeps no input for campaign no-such-campaign');
    },
  );

  it(
    "renders a personal text from the kept rows once the first campaign's audience is gone",
    { timeout: 180_000 },
    async () => {
      const key = `retry-personal-${Date.now()}`;
      const file = join(dir, 'due.csv');
      writeFileSync(
        file,
        `name,phone\nAda,${MAGIC_NUMBERS.failed}\nBola,${MAGIC_NUMBERS.delivered}\nChidi,${MAGIC_NUMBERS.undelivered}\n`,
      );
      const message = 'Hi {name}, your payment is due';
      const first = await stack.msgflow.startCampaign(
        { sender: 'ACME', message, audience: { type: 'file', path: file } },
        { key },
      );
      expect(await first.result()).toMatchObject({ sent: 3 });
      rmSync(file);
      const retry = await stack.msgflow.retryCampaign(key, { overrides: { message: 'Hi {name}, last reminder' } });
      expect(await preflightEstimate(retry)).toMatchObject({ recipients: 2, cost: 6 });
      expect(await retry.result()).toMatchObject({ sent: 2 });
      expect(await texts(MAGIC_NUMBERS.failed)).toContain('Hi Ada, last reminder');
      expect(await texts(MAGIC_NUMBERS.undelivered)).toContain('Hi Chidi, last reminder');
      expect(await texts(MAGIC_NUMBERS.delivered)).not.toContain('Hi Bola, last reminder');

      // The same run again; other overrides are another input.
      expect(
        (await stack.msgflow.retryCampaign(key, { overrides: { message: 'Hi {name}, last reminder' } })).workflowId,
      ).toBe(retry.workflowId);
      await expect(stack.msgflow.retryCampaign(key)).rejects.toThrow(KeyReusedError);
    },
  );

  it('works from the store alone, for a campaign whose Temporal history is gone', { timeout: 120_000 }, async () => {
    const key = `retry-gone-${Date.now()}`;
    // What the worker kept when it ran; Temporal has never heard of it (its history past retention).
    await stack.store.campaignInputs.keep(key, {
      sender: 'ACME',
      message: 'Your order has shipped',
      audience: { type: 'file', path: join(dir, 'gone.txt') },
    });
    const sent = [
      [`${key}-1`, MAGIC_NUMBERS.failed, 'failed'],
      [`${key}-2`, MAGIC_NUMBERS.delivered, 'delivered'],
    ] as const;
    await stack.store.register(
      `campaign:${key}`,
      sent.map(([providerMessageId, digits]) => ({ providerMessageId, number: plus(digits), campaignKey: key })),
    );
    await stack.store.recordEvents(
      sent.map(([providerMessageId, , status]) => ({ providerMessageId, status, timestamp: new Date().toISOString() })),
    );
    await stack.store.release(`campaign:${key}`);

    const retry = await stack.msgflow.retryCampaign(key);
    expect(await retry.result()).toMatchObject({ sent: 1 });
    expect(await texts(MAGIC_NUMBERS.failed)).toContain('Your order has shipped');
    expect(await texts(MAGIC_NUMBERS.delivered)).not.toContain('Your order has shipped');

    // A campaign the store has no failed recipient of: its retry completes, sending nothing.
    await stack.store.campaignInputs.keep(`${key}-all-delivered`, {
      sender: 'ACME',
      message: 'x',
      audience: { type: 'inline', recipients: ['1'] },
    });
    const nothing = await stack.msgflow.retryCampaign(`${key}-all-delivered`);
    expect(await preflightEstimate(nothing)).toMatchObject({ recipients: 0, cost: 0 });
    expect(await nothing.result()).toMatchObject({ sent: 0, cancelled: false });
  });

  it("retries a scheduled reminder's run by its own key", { timeout: 120_000 }, async () => {
    const id = `retry-schedule-${Date.now()}`;
    const schedules = stack.msgflow.campaignSchedules;
    await schedules.create({
      id,
      timing: { cron: ['0 9 1 1 *'], timeZone: 'Africa/Lagos' },
      campaign: {
        sender: 'ACME',
        message: 'Your weekly statement is ready',
        audience: { type: 'inline', recipients: [plus(MAGIC_NUMBERS.undelivered), plus(MAGIC_NUMBERS.delivered)] },
      },
    });
    try {
      await schedules.trigger(id);
      let runs: Array<{ workflowId: string }> = [];
      for (let i = 0; i < 100 && runs.length === 0; i++) {
        runs = (await schedules.describe(id)).recentRuns;
        if (runs.length === 0) await new Promise((r) => setTimeout(r, 200));
      }
      const run = stack.msgflow.campaign(runs[0]!.workflowId);
      expect(await run.result()).toMatchObject({ sent: 2 });

      const retry = await stack.msgflow.retryCampaign(run.key);
      expect(retry.workflowId).toBe(`campaign:${run.key}:retry`);
      expect(await retry.result()).toMatchObject({ sent: 1, counts: { undelivered: 1 } });
      const statements = async (digits: string) =>
        (await texts(digits)).filter((t) => t === 'Your weekly statement is ready').length;
      expect(await statements(MAGIC_NUMBERS.undelivered)).toBe(2);
      expect(await statements(MAGIC_NUMBERS.delivered)).toBe(1);
    } finally {
      await schedules.delete(id);
    }
  });
});
