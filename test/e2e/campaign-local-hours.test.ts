/**
 * Send windows in each recipient's own local hours, end to end on the real stack (the CLI as a child
 * process). Windows are computed from the clock when each test starts, so they are short and the test
 * waits only seconds: Asia/Dhaka (UTC+6) and Asia/Kathmandu (UTC+5:45) are 15 minutes apart and keep no
 * daylight-saving time, so the same local window of 14 min 50 s closes in Dhaka 10 s before it opens in
 * Kathmandu. The request-time check is shown by a rate limit that holds a request until its window closed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const cwd = mkdtempSync(join(tmpdir(), 'campaign-local-hours-'));

/** The wall-clock time HH:MM:SS at `instant` in a zone `offsetMinutes` ahead of UTC. */
function localClock(instant: number, offsetMinutes: number): string {
  return new Date(instant + offsetMinutes * 60_000).toISOString().slice(11, 19);
}

const SECOND = 1000;

describe('send windows in local hours', () => {
  let stack: RunningStack;
  let env: Record<string, string>;

  const msgflow = (...args: string[]) => runMsgflow(args, { cwd, env });
  const sentAt = async (n: string) => (await stack.admin.inbox(n)).map((m) => Date.parse(m.created_at));

  beforeAll(async () => {
    stack = await startTestStack({ initialBalance: 100_000 });
    env = cliEnvFor(stack);
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it(
    "sends each recipient inside their own window, zones from a column or the number's country",
    { timeout: 180_000 },
    async () => {
      const now = Math.ceil(Date.now() / SECOND) * SECOND;
      const dhakaCloses = now + 60 * SECOND;
      const length = 14 * 60 * SECOND + 50 * SECOND;
      const dhakaOpens = dhakaCloses - length; // opened about 14 minutes ago
      const kathmanduOpens = dhakaOpens + 15 * 60 * SECOND; // 10 s after Dhaka's closes
      const kathmanduCloses = kathmanduOpens + length;
      const window = `${localClock(dhakaOpens, 360)}-${localClock(dhakaCloses, 360)}`;

      const [dhaka, kathmandu, lagos] = ['2348060000001', '2348060000002', '2348060000003'];
      writeFileSync(
        join(cwd, 'zones.csv'),
        [
          'name,phone,tz',
          `Ada,${dhaka},Asia/Dhaka`,
          `Bola,${kathmandu},Asia/Kathmandu`,
          `Chidi,${lagos},`, // no zone given: a Nigerian number, so Africa/Lagos (UTC+1), hours away
          '',
        ].join('\n'),
      );
      const key = `local-hours-${now}`;
      const started = await msgflow(
        'campaign',
        'start',
        '--key',
        key,
        '--sender',
        'ACME',
        '--message',
        'Hi {name}, your appointment is tomorrow.',
        '--file',
        'zones.csv',
        '--window',
        window,
        '--window-time-zone',
        'recipient',
        '--time-zone-field',
        'TZ',
      );
      expect(started.stderr).toBe('');
      expect(started.code).toBe(0);

      await waitFor(async () => (await sentAt(kathmandu)).length === 1, 'the Kathmandu recipient sent', {
        timeoutMs: 150_000,
        intervalMs: 500,
      });
      const [dhakaSent] = await sentAt(dhaka);
      const [kathmanduSent] = await sentAt(kathmandu);
      expect(dhakaSent).toBeGreaterThanOrEqual(dhakaOpens);
      expect(dhakaSent).toBeLessThan(dhakaCloses);
      expect(kathmanduSent).toBeGreaterThanOrEqual(kathmanduOpens);
      expect(kathmanduSent).toBeLessThan(kathmanduCloses);

      // Lagos' window (the same local hours, five hours after Dhaka's) has not opened: the campaign waits for it.
      const lagosOpens = dhakaOpens + 5 * 60 * 60 * SECOND;
      const status = async () => JSON.parse((await msgflow('campaign', 'status', key, '--json')).stdout);
      await waitFor(async () => (await status()).phase === 'outside-window', 'waiting for Lagos', {
        timeoutMs: 30_000,
      });
      expect(await status()).toMatchObject({ sent: 2, windowOpensAt: new Date(lagosOpens).toISOString() });
      expect(await sentAt(lagos)).toEqual([]);
      expect((await msgflow('campaign', 'cancel', key)).code).toBe(0);
    },
  );

  it(
    'refuses at request time a request held past its window, which then waits for the next opening',
    { timeout: 300_000 },
    async () => {
      // A stack whose provider queue allows 2 requests a minute (the server's limiter holds each further
      // request 30 s or more): of three requests started together inside a window that stays open 40 s
      // (time enough for the first on a busy machine), the third is held past its close.
      const slow = await startTestStack({ initialBalance: 100_000, ratePerMinute: 2 });
      try {
        // Only the worker's queue is slow: the provider itself answers at once (a 429 retried would be a retry,
        // and a retry of a request that may have been sent always completes).
        await slow.admin.setRateLimit(slow.accountId!, 60_000);
        const now = Math.ceil(Date.now() / SECOND) * SECOND;
        const closes = now + 40 * SECOND;
        const numbers = ['2348060000011', '2348060000012', '2348060000013'];
        writeFileSync(
          join(cwd, 'held.csv'),
          ['name,phone', ...numbers.map((n, i) => `${['Ada', 'Bola', 'Chidi'][i]},${n}`), ''].join('\n'),
        );
        const run = await slow.msgflow.startCampaign(
          {
            sender: 'ACME',
            message: 'Hi {name}',
            audience: { type: 'file', path: join(cwd, 'held.csv') },
            preflight: false, // no pricing calls on the slow provider queue
            sendWindow: {
              start: localClock(now - 60 * SECOND, 60),
              end: localClock(closes, 60),
              timeZone: 'Africa/Lagos',
            },
          },
          { key: `held-${now}` },
        );
        const sentAt = async () =>
          (await Promise.all(numbers.map((n) => slow.admin.inbox(n)))).flat().map((m) => Date.parse(m.created_at));
        await waitFor(async () => (await sentAt()).length >= 1, 'the first request sent', { timeoutMs: 60_000 });
        const history = async () =>
          (await slow.temporal.workflow.getHandle(run.workflowId).fetchHistory()).events ?? [];
        await waitFor(
          async () =>
            (await history()).some(
              (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === 'SendWindowClosed',
            ),
          'the held request refused at request time',
          { timeoutMs: 200_000, intervalMs: 500 },
        );
        // Whatever was sent was sent inside the window; the refused request waits for the next opening.
        const sent = await sentAt();
        expect(sent.length).toBeLessThan(numbers.length);
        for (const at of sent) expect(at).toBeLessThan(closes);
        const progress = await run.progress();
        expect(progress).toMatchObject({ phase: 'outside-window', sent: sent.length });
        expect(Date.parse(progress.windowOpensAt!)).toBeGreaterThan(Date.now());
        await run.cancel();
      } finally {
        await slow.close();
      }
    },
  );
});
