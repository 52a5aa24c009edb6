/**
 * The suppression list end to end on the real stack (sandbox over HTTP, ingress, worker, Temporal dev server,
 * a SQLite store encrypted at rest): a suppressed number is never charged (the sandbox's ledger) nor sent to
 * (its inbox), and is counted; sendSms ends with a suppressed result; a schedule's each run reads the list as
 * it is then; the CLI imports opt-outs, lists them, and erases one person's number.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keyring.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { keyRingOf } from '../../src/temporal/data-converter.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const dir = mkdtempSync(join(tmpdir(), 'suppression-'));

const A = '2348030000031';
const B = '2348030000032';
const C = '2348030000033';

describe('suppression list', () => {
  let stack: RunningStack;
  let env: Record<string, string>;
  const encryptionKey = `k1:${generateKey()}`;
  const lookupKey = randomBytes(32);
  const storeFile = join(dir, 'msgflow.db');

  const msgflow = (...args: string[]) => runMsgflow(args, { cwd: dir, env });

  /** What the sandbox charged for SMS to `digits`: ledger entries. */
  const charges = async (digits: string) =>
    (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms' && e.recipient === `+${digits}`);
  const inbox = async (digits: string) => (await stack.admin.inbox(digits)).length;
  const suppressions = () => stack.msgflow.suppressions;

  beforeAll(async () => {
    stack = await startTestStack({
      encryptionKey,
      store: { file: storeFile, encryption: { ring: keyRingOf(encryptionKey), lookupKey } },
    });
    env = {
      ...cliEnvFor(stack),
      MSGFLOW_STORE_FILE: storeFile,
      MSGFLOW_ENCRYPTION_KEY: encryptionKey,
      MSGFLOW_STORE_LOOKUP_KEY: lookupKey.toString('base64'),
    };
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a campaign skips a suppressed number: never charged, never sent, counted', { timeout: 120_000 }, async () => {
    const key = `suppressed-${Date.now()}`;
    expect(await suppressions().add([`+${B}`], { reason: 'replied STOP' })).toEqual({ added: 1, alreadyListed: 0 });
    const run = await stack.msgflow.startCampaign(
      {
        sender: 'ACME',
        message: 'Your appointment is tomorrow',
        audience: { type: 'inline', recipients: [A, B, C] },
        chunkSize: 2,
      },
      { key },
    );
    const result = await run.result();
    expect(result).toMatchObject({ sent: 2, suppressed: 1, counts: expect.objectContaining({ delivered: 2 }) });
    expect(await run.progress()).toMatchObject({ phase: 'completed', sent: 2, suppressed: 1 });

    expect(await charges(B)).toEqual([]);
    expect(await inbox(B)).toBe(0);
    expect((await charges(A)).length + (await charges(C)).length).toBe(2);
    expect(result.cost).toBe((await charges(A))[0]!.amount + (await charges(C))[0]!.amount);
    await suppressions().remove([`+${B}`]);
  });

  it('sendSms to a suppressed number ends as suppressed, with no charge', { timeout: 60_000 }, async () => {
    const optedOut = MAGIC_NUMBERS.delivered.replace(/0$/, '9'); // 12025550109: a valid number the sandbox delivers
    await suppressions().add([optedOut]);
    const ledgerBefore = (await stack.admin.ledger(stack.accountId!)).length;

    const alone = await (
      await stack.msgflow.sendSms({ recipients: [optedOut], sender: 'ACME', message: 'hi' })
    ).result();
    expect(alone).toEqual({
      campaignId: null,
      cost: 0,
      currency: null,
      messages: [],
      suppressed: [`+${optedOut}`],
      duplicates: [],
    });
    expect((await stack.admin.ledger(stack.accountId!)).length).toBe(ledgerBefore);

    const mixed = await (
      await stack.msgflow.sendSms({ recipients: [optedOut, MAGIC_NUMBERS.delivered], sender: 'ACME', message: 'hi' })
    ).result();
    expect(mixed.suppressed).toEqual([`+${optedOut}`]);
    expect(mixed.messages.map((m) => [m.mobile_number, m.status])).toEqual([
      [`+${MAGIC_NUMBERS.delivered}`, 'delivered'],
    ]);
    expect(await charges(optedOut)).toEqual([]);
    expect(await inbox(optedOut)).toBe(0);
    await suppressions().remove([optedOut]);
  });

  it("a schedule's each run reads the list as it is when it runs", { timeout: 180_000 }, async () => {
    const D = '2348030000034';
    const E = '2348030000035';
    const id = `suppression-schedule-${Date.now()}`;
    const schedules = stack.msgflow.campaignSchedules;
    await schedules.create({
      id,
      timing: { cron: ['0 9 1 1 *'], timeZone: 'Africa/Lagos' },
      campaign: { sender: 'ACME', message: 'Reminder', audience: { type: 'inline', recipients: [D, E] } },
    });
    try {
      await schedules.trigger(id);
      const first = await waitFor(async () => (await schedules.describe(id)).recentRuns[0], 'the first run');
      expect(await stack.msgflow.campaign(first.workflowId).result()).toMatchObject({ sent: 2, suppressed: 0 });

      await suppressions().add([E]); // E opts out between the two runs
      await schedules.trigger(id);
      const second = await waitFor(async () => (await schedules.describe(id)).recentRuns[1], 'the second run');
      expect(await stack.msgflow.campaign(second.workflowId).result()).toMatchObject({ sent: 1, suppressed: 1 });
      expect({ D: await inbox(D), E: await inbox(E) }).toEqual({ D: 2, E: 1 });
      expect(await charges(E)).toHaveLength(1);
    } finally {
      await schedules.delete(id);
    }
  });

  it(
    'the CLI imports opt-outs, lists them, and a campaign started from it counts them',
    { timeout: 120_000 },
    async () => {
      const F = '2348030000036';
      const G = '2348030000037';
      const file = join(dir, 'opt-outs.csv');
      writeFileSync(
        file,
        `name,phone,note\nFola,+${F},replied STOP\nGbenga,0803 000 0037,\nNobody,12,\nFola again,${F},\n`,
      );
      const imported = await msgflow(
        'suppression',
        'import',
        file,
        '--default-country',
        'NG',
        '--reason',
        'STOP replies',
      );
      expect(imported.stderr).toBe('');
      expect(imported.stdout).toContain('read 4: added 2, already listed 0, duplicates 1, invalid 1');
      expect(imported.stdout).toContain('row 3 (12)');

      const listed = await msgflow('suppression', 'list', '--json');
      expect(JSON.parse(listed.stdout).rows).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ number: `+${F}`, reason: 'STOP replies' }),
          expect.objectContaining({ number: `+${G}` }),
        ]),
      );
      // At rest the numbers are sealed: the store file does not hold them in clear.
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(storeFile, { readonly: true });
      expect(JSON.stringify(db.prepare('SELECT * FROM suppressions').all())).not.toContain(F);
      db.close();

      const key = `cli-suppressed-${Date.now()}`;
      const started = await msgflow(
        'campaign',
        'start',
        '--key',
        key,
        '--sender',
        'ACME',
        '--message',
        'Reminder',
        '--to',
        `${A},${F},${G}`,
        '--wait',
      );
      expect(started.stderr).toBe('');
      expect(started.stdout).toContain(`campaign:${key} completed: 1 sent in 1 chunk(s)`);
      expect(started.stdout).toContain('suppressed (opted out, not sent): 2');
      expect(await charges(F)).toEqual([]);
      expect(await charges(G)).toEqual([]);

      const removed = await msgflow('suppression', 'remove', `+${G}`, '+2348030000099');
      expect(removed.stdout.trim()).toBe('removed 1, not listed 1');
      const bad = await msgflow('suppression', 'add', '+2348030000077', 'not-a-number');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/invalid numbers, nothing changed: number 2 \("not-a-number"\): /);
    },
  );

  it(
    'data erase removes a number from the reports, keeps its opt-out, and says what remains where',
    { timeout: 120_000 },
    async () => {
      const H = '2348030000038';
      const key = `erase-${Date.now()}`;
      const run = await stack.msgflow.startCampaign(
        { sender: 'ACME', message: 'Reminder', audience: { type: 'inline', recipients: [H, A] } },
        { key },
      );
      await run.result();
      await suppressions().add([`+${H}`]);
      const report = async () => (await msgflow('campaign', 'report', key, '--json')).stdout;
      expect(
        JSON.parse(await report())
          .rows.map((r: { number: string }) => r.number)
          .sort(),
      ).toEqual([`+${A}`, `+${H}`]);

      const erased = await msgflow('data', 'erase', `+${H}`);
      expect(erased.stderr).toBe('');
      expect(erased.stdout).toContain(`erased +${H} from the message store: 1 message row(s) no longer name it`);
      expect(erased.stdout).toMatch(/suppression list: the opt-out stays, as a keyed hash/);
      expect(erased.stdout).toMatch(/Temporal: .*retention/);
      expect(erased.stdout).toMatch(/the provider: /);

      const rows = JSON.parse(await report()).rows as Array<{ number: string | null; status: string }>;
      expect(rows.map((r) => r.number).sort()).toEqual([`+${A}`, null].sort());
      expect(rows.every((r) => r.status === 'delivered')).toBe(true);
      expect(await stack.store.messagesTo(`+${H}`)).toEqual([]);
      // Still suppressed, listed without its number.
      expect(await suppressions().has(`+${H}`)).toBe(true);
      const json = JSON.parse((await msgflow('data', 'erase', `+${H}`, '--json')).stdout);
      expect(json).toMatchObject({
        number: `+${H}`,
        store: { messages: 0, suppressed: true, suppressionKeptAs: 'keyed-hash' },
      });
      expect(json.remains.length).toBeGreaterThanOrEqual(3);
    },
  );
});
