/**
 * Personal texts end to end, through `msgflow campaign start` (a child process) on the real stack: a CSV
 * with names fills each recipient's text (read back from the sandbox's inbox), recipients with the same text
 * share one provider request (counted at the sandbox by its request ids), and a row without a field the
 * template names fails pre-flight, naming the field and the row, before anything is sent.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const cwd = mkdtempSync(join(tmpdir(), 'campaign-personal-'));

/** Every byte string in `value` (a history's payload data), read as UTF-8. */
function bytesIn(value: unknown): string[] {
  if (value instanceof Uint8Array) return [Buffer.from(value).toString('utf8')];
  if (typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap(bytesIn);
}

describe('personal campaign texts', () => {
  let stack: RunningStack;
  let env: Record<string, string>;

  const msgflow = (...args: string[]) => runMsgflow(args, { cwd, env });

  /** The sandbox's request id (`campaign_id`) of each message sent to these numbers. */
  async function requestOf(numbers: string[]): Promise<Map<string, string | null>> {
    const requests = new Map<string, string | null>();
    for await (const m of stack.messaging.messages.list({ perPage: 200 })) {
      if (numbers.includes(m.mobile_number.replace(/^\+/, '')))
        requests.set(m.mobile_number.replace(/^\+/, ''), m.campaign_id);
    }
    return requests;
  }

  beforeAll(async () => {
    stack = await startTestStack();
    env = cliEnvFor(stack);
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('gives each recipient their own text, and equal texts share a request', { timeout: 120_000 }, async () => {
    const [ada, bola, ada2, chidi] = ['2348050000001', '2348050000002', '2348050000003', '2348050000004'];
    writeFileSync(
      join(cwd, 'reminders.csv'),
      [
        'Name,phone,clinic,timezone',
        `Ada,+${ada},Lekki,Africa/Lagos`,
        `Bola,${bola},"Ikeja, GRA",Africa/Lagos`,
        `Ada,${ada2},Lekki,Africa/Lagos`, // another Ada at the same clinic: the same text
        `Chidi,${chidi},Lekki,Africa/Lagos`,
        '',
      ].join('\n'),
    );
    const result = await msgflow(
      'campaign',
      'start',
      '--key',
      `personal-${Date.now()}`,
      '--sender',
      'ACME',
      '--message',
      'Hi {name}, your appointment at {clinic} is tomorrow at 10:00. Reply STOP to opt out.',
      '--file',
      'reminders.csv',
      '--wait',
      '--json',
    );
    expect(result.stderr).toBe('');
    const outcome = JSON.parse(result.stdout);
    // Four recipients, three distinct texts: three requests (chunks), the estimate counts each text.
    expect(outcome).toMatchObject({ sent: 4, chunks: 3, counts: { delivered: 4 } });
    expect(outcome.estimate).toMatchObject({ recipients: 4, segments: 1, totalSegments: 4, ucs2Recipients: 0 });

    const text = async (n: string) => (await stack.admin.inbox(n)).map((m) => m.text);
    expect(await text(ada)).toEqual(['Hi Ada, your appointment at Lekki is tomorrow at 10:00. Reply STOP to opt out.']);
    expect(await text(bola)).toEqual([
      'Hi Bola, your appointment at Ikeja, GRA is tomorrow at 10:00. Reply STOP to opt out.',
    ]);
    expect(await text(ada2)).toEqual(await text(ada));
    expect(await text(chidi)).toEqual([
      'Hi Chidi, your appointment at Lekki is tomorrow at 10:00. Reply STOP to opt out.',
    ]);

    const requests = await requestOf([ada, bola, ada2, chidi]);
    expect(requests.get(ada)).toBe(requests.get(ada2));
    expect(new Set(requests.values()).size).toBe(3);

    // The same audience with a text that has no placeholder: one request, as before templates.
    const uniform = await msgflow(
      'campaign',
      'start',
      '--sender',
      'ACME',
      '--message',
      'Clinic notice: bring your card {{ID}}.',
      '--file',
      'reminders.csv',
      '--wait',
      '--json',
    );
    expect(JSON.parse(uniform.stdout)).toMatchObject({ sent: 4, chunks: 1 });
    expect((await text(chidi))[0]).toBe('Clinic notice: bring your card {ID}.');
  });

  it(
    'runs a personal reminder schedule from a CSV with names and time zones, each in their local hours',
    { timeout: 120_000 },
    async () => {
      const [lagos, tokyo] = ['2348050000021', '2348050000022'];
      writeFileSync(
        join(cwd, 'appointments.csv'),
        ['name,phone,clinic,timezone', `Ada,${lagos},Lekki,`, `Kenji,${tokyo},Shibuya,Asia/Tokyo`, ''].join('\n'),
      );
      const id = `personal-schedule-${Date.now()}`;
      const created = await msgflow(
        'schedule',
        'create',
        id,
        '--cron',
        '0 9 * * MON',
        '--catchup-window',
        '10m',
        '--paused',
        '--sender',
        'ACME',
        '--message',
        'Hi {name}, your appointment at {clinic} is tomorrow.',
        '--file',
        'appointments.csv',
        // Open all day but one second, in each recipient's zone (the Lagos one told by the number).
        '--window',
        '00:00:00-23:59:59',
        '--window-time-zone',
        'recipient',
        '--json',
      );
      expect(created.stderr).toBe('');
      expect(JSON.parse(created.stdout)).toMatchObject({
        campaign: { sendWindow: { timeZone: 'recipient' } },
      });
      expect((await msgflow('schedule', 'trigger', id)).stdout).toContain('triggered');
      const inbox = async (n: string) => (await stack.admin.inbox(n)).map((m) => m.text);
      await waitFor(async () => (await inbox(tokyo)).length && (await inbox(lagos)).length, 'both reminders', {
        timeoutMs: 90_000,
        intervalMs: 500,
      });
      expect(await inbox(lagos)).toEqual(['Hi Ada, your appointment at Lekki is tomorrow.']);
      expect(await inbox(tokyo)).toEqual(['Hi Kenji, your appointment at Shibuya is tomorrow.']);
      expect((await msgflow('schedule', 'delete', id)).stdout).toContain('deleted');
    },
  );

  it(
    'sends a page of distinct texts one request each across continue-as-new, without texts in the history',
    { timeout: 180_000 },
    async () => {
      const count = 120;
      const numbers = Array.from({ length: count }, (_, i) => `23480510${String(i).padStart(5, '0')}`);
      const path = join(cwd, 'many.ndjson');
      writeFileSync(path, numbers.map((phone, i) => JSON.stringify({ phone, ref: `R-${i}` })).join('\n'));
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'Your reference is {ref}',
        audience: { type: 'file', path },
        chunksInFlight: 8,
        maxEventsPerRun: 200, // several runs: pending requests are handed on
      });
      const result = await run.result();
      expect(result).toMatchObject({ sent: count, chunks: count, counts: { delivered: count } });
      expect(result.runs).toBeGreaterThan(1);
      expect((await stack.admin.inbox(numbers[77]!)).map((m) => m.text)).toEqual(['Your reference is R-77']);
      const requests = await requestOf(numbers);
      expect(new Set(requests.values()).size).toBe(count);
      // The histories of its runs hold numbers and groups, never a rendered text.
      // Visibility may lag a moment behind the last continue-as-new.
      const runIds = await waitFor(async () => {
        const ids: string[] = [];
        for await (const { runId } of stack.temporal.workflow.list({ query: `WorkflowId = '${run.workflowId}'` }))
          ids.push(runId);
        return ids.length === result.runs && ids;
      }, 'every run of the campaign in the list');
      const handle = (runId: string) => stack.temporal.workflow.getHandle(run.workflowId, runId);
      const histories = await Promise.all(runIds.map((runId) => handle(runId).fetchHistory()));
      const payloads = bytesIn(histories).join('\n'); // this stack has no key: payloads are plain JSON
      expect(payloads).toContain(numbers.at(-1)); // the numbers are there…
      expect(payloads).toContain('Your reference is {ref}'); // …and the template…
      expect(payloads).not.toContain('Your reference is R-'); // …but no rendered text
    },
  );

  it('fails pre-flight naming the missing field and the row, sending nothing', { timeout: 120_000 }, async () => {
    writeFileSync(
      join(cwd, 'gaps.csv'),
      ['name,phone,clinic', 'Dayo,2348050000011,Lekki', 'Efe,2348050000012,', 'Femi,2348050000013,Ikeja', ''].join(
        '\n',
      ),
    );
    const before = (await stack.admin.ledger(stack.accountId!)).length;
    const result = await msgflow(
      'campaign',
      'start',
      '--sender',
      'ACME',
      '--message',
      'Hi {name}, see you at {clinic}.',
      '--file',
      'gaps.csv',
      '--no-preflight', // personal texts are checked even without the cost estimate
      '--wait',
    );
    expect(result.code).toBe(3); // refused: no retry fixes the audience
    expect(result.stderr).toContain("the message's {clinic} has no value in row 2 of the audience");
    expect(result.stderr).not.toContain('2348050000012');
    expect((await stack.admin.ledger(stack.accountId!)).length).toBe(before);
    expect(await stack.admin.inbox('2348050000011')).toEqual([]);

    // An inline audience has no fields: refused before the campaign starts.
    const inline = await msgflow(
      'campaign',
      'start',
      '--sender',
      'ACME',
      '--message',
      'Hi {name}',
      '--to',
      '2348050000011',
    );
    expect(inline.code).toBe(2);
    expect(inline.stderr).toContain('an inline audience has only numbers');
  });

  it(
    'reads a UTF-16 CSV saved by a spreadsheet, and refuses a Latin-1 one saying to save it as UTF-8',
    { timeout: 120_000 },
    async () => {
      const [ade, bola] = ['2348050000031', '2348050000032']; // not the schedule test's numbers: one inbox
      const rows = `Name\tphone\r\nAdé\t${ade}\r\nBola\t${bola}\r\n`;
      writeFileSync(join(cwd, 'unicode.csv'), Buffer.from(`\uFEFF${rows}`, 'utf16le'));
      const read = await msgflow(
        'campaign',
        'start',
        '--sender',
        'ACME',
        '--message',
        'Hi {Name}',
        '--file',
        'unicode.csv',
        '--wait',
        '--json',
      );
      expect(read.stderr).toBe('');
      expect(JSON.parse(read.stdout)).toMatchObject({ sent: 2, invalid: { count: 0 }, counts: { delivered: 2 } });
      expect((await stack.admin.inbox(ade)).map((m) => m.text)).toEqual(['Hi Adé']);

      writeFileSync(join(cwd, 'latin1.csv'), Buffer.from(`phone,Name\n2348050000033,Adé\n`, 'latin1'));
      const before = (await stack.admin.ledger(stack.accountId!)).length;
      const refused = await msgflow(
        'campaign',
        'start',
        '--sender',
        'ACME',
        '--message',
        'Hi {Name}',
        '--file',
        'latin1.csv',
        '--wait',
      );
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain('the audience file is not UTF-8 text: save it as UTF-8');
      expect((await stack.admin.ledger(stack.accountId!)).length).toBe(before);
    },
  );
});
