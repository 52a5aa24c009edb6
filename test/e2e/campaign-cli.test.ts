/**
 * `msgflow campaign …` and `msgflow schedule …` as a user runs them (child processes) against the real
 * stack: a campaign with live progress and its result, status, clear errors for bad input, and every
 * schedule operation.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { startTestStack } from '../support/stack.js';

// A directory of its own, so no .data/dev.env of a developer's `msgflow dev` run leaks in.
const cwd = mkdtempSync(join(tmpdir(), 'campaign-cli-'));

describe('msgflow campaign and schedule', () => {
  let stack: RunningStack;
  let env: Record<string, string>;

  const msgflow = (...args: string[]) => runMsgflow(args, { cwd, env });

  beforeAll(async () => {
    stack = await startTestStack();
    env = cliEnvFor(stack);
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('starts a campaign, shows its progress, and prints the result', { timeout: 120_000 }, async () => {
    const key = `cli-${Date.now()}`;
    const start = [
      'campaign',
      'start',
      '--key',
      key,
      '--sender',
      'ACME',
      '--message',
      'Your payment is due',
      '--chunk-size',
      '2',
      '--to',
      `+${MAGIC_NUMBERS.delivered},${MAGIC_NUMBERS.undelivered},+234 803 000 0009`,
    ];
    const started = await msgflow(...start, '--wait');
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    const lines = started.stdout.trim().split('\n');
    expect(lines[0]).toBe(`campaign campaign:${key}`);
    // Progress lines (bar, phase, counts), then the result.
    expect(lines.some((l) => /^\[[#-]+\]\s+\d+% \w+/.test(l))).toBe(true);
    expect(started.stdout).toContain(`campaign:${key} completed: 3 sent in 2 chunk(s), cost 9 USD`);
    expect(started.stdout).toMatch(/states: delivered 2, undelivered 1, failed 0, rejected 0, expired 0/);

    const status = await msgflow('campaign', 'status', key, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({
      phase: 'completed',
      sent: 3,
      queued: 0,
      counts: { delivered: 2, undelivered: 1 },
    });

    // The same key and input again: the same campaign and result, nothing new sent.
    const again = await msgflow(...start, '--wait', '--json');
    // --json: the result alone on stdout, one document, with the workflow id.
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      workflowId: `campaign:${key}`,
      sent: 3,
      counts: { delivered: 2, undelivered: 1 },
    });
    // The same key with another audience: refused before anything is sent, naming the key (exit status 2).
    const reused = await msgflow(...start.slice(0, -1), '2348030000009', '--wait');
    expect(reused.code).toBe(2);
    expect(reused.stderr).toContain(`key "${key}" was already used with another input`);
    expect(reused.stdout).toBe('');
    expect((await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms')).toHaveLength(3);

    const cancel = await msgflow('campaign', 'cancel', key);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toMatch(/finished|completed/);
  });

  it(
    'reads a ;-separated CSV with a BOM and a quoted line break, local numbers in --default-country',
    { timeout: 120_000 },
    async () => {
      const file = join(cwd, 'local.csv');
      writeFileSync(file, '\uFEFFname;phone;note\nAda;0803 000 0021;"paid late\nonce"\nBola;08030000022;\n');
      const key = `cli-local-${Date.now()}`;
      const campaign = (...extra: string[]) =>
        msgflow(
          'campaign',
          'start',
          '--sender',
          'ACME',
          '--message',
          'Your payment is due',
          '--file',
          'local.csv',
          '--wait',
          '--json',
          ...extra,
        );
      const sent = await campaign('--key', key, '--default-country', 'ng');
      expect(sent.stderr).toBe('');
      expect(JSON.parse(sent.stdout)).toMatchObject({
        workflowId: `campaign:${key}`,
        sent: 2,
        invalid: { count: 0 },
      });
      expect((await stack.admin.inbox('2348030000021'))[0]).toMatchObject({ text: 'Your payment is due' });

      // Without a country the same numbers are refused, each with the reason (the delimiter given, not detected).
      const refused = await campaign('--key', `${key}-no-country`, '--delimiter', ';');
      expect(JSON.parse(refused.stdout)).toMatchObject({
        sent: 0,
        invalid: {
          count: 2,
          recipients: [
            { index: 0, value: '**** *** **21', reason: expect.stringContaining('--default-country') },
            { index: 1, value: '*********22' },
          ],
        },
      });

      const unknownCountry = await campaign('--default-country', 'XX');
      expect(unknownCountry.code).toBe(2);
      expect(unknownCountry.stderr).toContain(
        'Invalid campaign: defaultCountry is not a country code phone numbers are known for, e.g. NG',
      );
    },
  );

  it('refuses bad input with a clear message', { timeout: 60_000 }, async () => {
    const badNumber = await msgflow(
      'campaign',
      'start',
      '--sender',
      'ACME',
      '--message',
      'hi',
      '--to',
      '2348030000009,call me',
    );
    expect(badNumber.code).toBe(2);
    expect(badNumber.stderr).toContain('"call me" (recipient 2): unknown number format');

    const noSender = await msgflow('campaign', 'start', '--message', 'hi', '--to', '2348030000009');
    expect(noSender.code).not.toBe(0);
    expect(noSender.stderr).toContain("required option '--sender <id>' not specified");

    const noAudience = await msgflow('campaign', 'start', '--sender', 'ACME', '--message', 'hi');
    expect(noAudience.code).toBe(2);
    expect(noAudience.stderr).toContain('give an audience');

    const badWindow = await msgflow(
      'campaign',
      'start',
      '--sender',
      'ACME',
      '--message',
      'hi',
      '--to',
      '2348030000009',
      '--window',
      '9-5',
    );
    expect(badWindow.code).toBe(2);
    expect(badWindow.stderr).toContain('--window must look like 09:00-18:00');

    const badSender = await msgflow(
      'campaign',
      'start',
      '--sender',
      'not a sender!',
      '--message',
      'hi',
      '--to',
      '2348030000009',
    );
    expect(badSender.code).toBe(2);
    expect(badSender.stderr).toMatch(/Invalid campaign: sender/);

    const unknown = await msgflow('campaign', 'status', 'no-such-campaign');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not found/i);
  });

  it(
    'creates, lists, describes, pauses, unpauses, triggers, updates and deletes a schedule',
    { timeout: 180_000 },
    async () => {
      const file = join(cwd, 'due.csv');
      writeFileSync(file, 'name,phone\nAda,+234 803 000 0011\nBola,2348030000012\n');
      const id = `cli-reminder-${Date.now()}`;

      const created = await msgflow(
        'schedule',
        'create',
        id,
        '--cron',
        '0 9 * * MON',
        '--time-zone',
        'Africa/Lagos',
        '--catchup-window',
        '10m',
        '--sender',
        'ACME',
        '--message',
        'Your payment is due',
        '--file',
        'due.csv',
        '--json',
      );
      expect(created.stderr).toBe('');
      expect(JSON.parse(created.stdout)).toMatchObject({
        id,
        timing: { cron: ['0 9 * * MON'], timeZone: 'Africa/Lagos' },
        policies: { overlap: 'skip', catchupWindowMs: 600_000 },
        campaign: { audience: { type: 'file', path: file } },
      });

      let listed = '';
      for (let i = 0; i < 50 && !listed.includes(id); i++) listed = (await msgflow('schedule', 'list')).stdout;
      expect(listed).toMatch(new RegExp(`^${id}  active  next \\S+`, 'm'));

      expect((await msgflow('schedule', 'pause', id, '--note', 'holiday')).stdout).toContain(`schedule ${id} paused`);
      expect(await msgflow('schedule', 'describe', id)).toMatchObject({
        stdout: expect.stringContaining(`schedule ${id}: paused (holiday)`),
      });
      expect((await msgflow('schedule', 'unpause', id)).stdout).toContain('unpaused');

      const updated = await msgflow(
        'schedule',
        'update',
        id,
        '--message',
        'Payment due today',
        '--every',
        '1d',
        '--offset',
        '8h',
        '--json',
      );
      expect(JSON.parse(updated.stdout)).toMatchObject({
        timing: { intervals: [{ everyMs: 86_400_000, offsetMs: 28_800_000 }] },
        campaign: { message: 'Payment due today' },
      });

      expect((await msgflow('schedule', 'trigger', id)).stdout).toContain('triggered');
      let described: { recentRuns: Array<{ workflowId: string }> } = { recentRuns: [] };
      for (let i = 0; i < 100 && described.recentRuns.length === 0; i++) {
        described = JSON.parse((await msgflow('schedule', 'describe', id, '--json')).stdout);
      }
      const runKey = described.recentRuns[0]!.workflowId;
      const watched = await msgflow('campaign', 'watch', runKey);
      expect(watched.stdout).toContain('completed: 2 sent');
      expect((await stack.admin.inbox('2348030000011'))[0]).toMatchObject({ text: 'Payment due today' });

      expect((await msgflow('schedule', 'delete', id)).stdout).toContain('deleted');
      const gone = await msgflow('schedule', 'describe', id);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain(`no such schedule: ${id}`);

      const noTiming = await msgflow(
        'schedule',
        'create',
        'x',
        '--sender',
        'ACME',
        '--message',
        'hi',
        '--file',
        'due.csv',
      );
      expect(noTiming.code).toBe(2);
      expect(noTiming.stderr).toContain('give a timing');
    },
  );
});
