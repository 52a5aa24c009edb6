/**
 * Failures explained on the command line, against the real stack with encrypted payloads: a refused send
 * names the provider's reason with exit status 3, a key reused with another input and input the facade refuses
 * exit 2 on every command, `campaign status` of a campaign that failed or was
 * terminated says so and why, an audience folder fails the pre-flight on its first attempt, and a transient
 * audience error shows as a step being retried.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keyring.js';
import { explainFailure } from '../../src/starter/failures.js';
import type { RunningStack } from '../../src/stack.js';
import { cliEnvFor, runMsgflow } from '../support/cli.js';
import { activityCalls } from '../support/history.js';
import { startTestStack } from '../support/stack.js';

const cwd = mkdtempSync(join(tmpdir(), 'failure-cli-'));

describe('failures explained by the CLI and the facade', () => {
  const encryptionKey = `k1:${generateKey()}`;
  let stack: RunningStack;
  let env: Record<string, string>;
  let server: Server;
  let flakyUrl: string;
  const msgflow = (...args: string[]) => runMsgflow(args, { cwd, env });

  beforeAll(async () => {
    stack = await startTestStack({ encryptionKey });
    env = { ...cliEnvFor(stack), MSGFLOW_ENCRYPTION_KEY: encryptionKey };
    server = createServer((_req, res) => res.writeHead(503).end('down for maintenance'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    flakyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/list.txt`;
  });
  afterAll(async () => {
    await stack?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    rmSync(cwd, { recursive: true, force: true });
  });

  it('sms send names why the provider refused, with exit status 3', { timeout: 120_000 }, async () => {
    const send = ['sms', 'send', '--to', '2348012345678', '--sender', 'NOPE', '--message', 'hi', '--wait'];
    const human = await msgflow(...send);
    expect(human.code).toBe(3);
    expect(human.stderr).toMatch(
      /^sms:\S+ failed: sender_not_approved — The sender "NOPE" is not approved for this account$/m,
    );

    const json = await msgflow(...send, '--json');
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({
      workflowId: expect.stringMatching(/^sms:/),
      failure: {
        status: 'failed',
        kind: 'sender_not_approved',
        type: 'ProviderValidationFailed',
        message: 'The sender "NOPE" is not approved for this account',
        nonRetryable: true,
      },
    });
  });

  it(
    'a key used again with another input is refused with exit status 2 naming the key, on every command',
    { timeout: 120_000 },
    async () => {
      const key = `reused-${Date.now()}`;
      const call = (message: string) =>
        msgflow('voice', 'call', '--key', key, '--to', '2348012345678', '--message', message);
      const sms = (message: string) =>
        msgflow('sms', 'send', '--key', key, '--to', '2348012345678', '--sender', 'ACME', '--message', message);
      const calls = async () => (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'voice');

      const first = await call('Your code is 1 2 3');
      expect(first.code).toBe(0);
      expect(first.stdout.trim()).toBe(`workflow voice:${key}`);
      expect(await call('Your code is 1 2 3')).toMatchObject({ code: 0, stdout: first.stdout });
      await stack.temporal.workflow.getHandle(`voice:${key}`).result();
      const charged = (await calls()).length;

      const reused = await call('Another message');
      expect(reused.code).toBe(2);
      expect(reused.stderr).toContain(`key "${key}" was already used with another input (workflow voice:${key})`);
      expect(reused.stdout).toBe('');
      expect(await calls()).toHaveLength(charged);

      // sms send keeps the same rule (a key of its own: sms:<key>).
      expect((await sms('hi')).code).toBe(0);
      const smsReused = await sms('hello');
      expect(smsReused.code).toBe(2);
      expect(smsReused.stderr).toContain(`key "${key}" was already used with another input (workflow sms:${key})`);
    },
  );

  it('sms send and voice call refuse input the facade refuses with exit status 2', { timeout: 60_000 }, async () => {
    const sms = await msgflow('sms', 'send', '--to', '12', '--sender', 'ACME', '--message', 'hi');
    expect(sms.code).toBe(2);
    expect(sms.stderr).toMatch(/^Invalid SMS: recipients.0 /);
    const call = await msgflow('voice', 'call', '--to', '12', '--message', 'hi');
    expect(call.code).toBe(2);
    expect(call.stderr).toMatch(/^Invalid voice call: recipient/);
  });

  it(
    'a folder as the audience file fails the pre-flight on its first attempt; status says failed and why',
    { timeout: 120_000 },
    async () => {
      const folder = join(cwd, 'audience-folder');
      mkdirSync(folder);
      const key = `folder-${Date.now()}`;
      const run = await stack.msgflow.startCampaign(
        { sender: 'ACME', message: 'hello', audience: { type: 'file', path: folder, format: 'txt' } },
        { key },
      );
      const reason = await run.result().then(
        () => undefined,
        (error: unknown) => explainFailure(error),
      );
      expect(reason).toMatchObject({
        status: 'failed',
        kind: 'AudienceUnavailable',
        message: expect.stringContaining('it is a folder, not a file (EISDIR)'),
      });
      const { events } = await stack.temporal.workflow.getHandle(run.workflowId).fetchHistory();
      const audienceCalls = activityCalls(events ?? []).filter((c) => /audience/i.test(c.activityType));
      expect(audienceCalls.length).toBeGreaterThan(0);
      expect(audienceCalls.map((c) => c.attempt)).toEqual(audienceCalls.map(() => 1));

      const status = await msgflow('campaign', 'status', key);
      expect(status.code).toBe(3);
      expect(status.stdout).toMatch(/\bfailed · sent 0/);
      expect(status.stdout).toContain(`campaign:${key} failed: AudienceUnavailable — `);
      expect(status.stdout).toContain('it is a folder, not a file (EISDIR)');

      const json = await msgflow('campaign', 'status', key, '--json');
      expect(json.code).toBe(3);
      expect(JSON.parse(json.stdout)).toMatchObject({
        workflowId: `campaign:${key}`,
        phase: 'failed',
        sent: 0,
        failure: { status: 'failed', kind: 'AudienceUnavailable', nonRetryable: true },
        retrying: [],
      });

      // The CLI itself refuses a folder before starting anything.
      const refused = await msgflow('campaign', 'start', '--sender', 'ACME', '--message', 'hi', '--file', folder);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('is a folder, not a file');
    },
  );

  it(
    'a transient audience error shows as a retried step; a terminated campaign exits 4',
    { timeout: 120_000 },
    async () => {
      const key = `flaky-${Date.now()}`;
      await stack.msgflow.startCampaign(
        { sender: 'ACME', message: 'hello', audience: { type: 'url', url: flakyUrl, format: 'txt' } },
        { key },
      );
      let status: { phase?: string; retrying?: Array<{ attempt: number; lastFailure: { message: string } }> } = {};
      for (let i = 0; i < 60 && !status.retrying?.length; i++) {
        const answer = await msgflow('campaign', 'status', key, '--json');
        expect(answer.code).toBe(0);
        status = JSON.parse(answer.stdout);
      }
      expect(status.phase).toBe('preflight');
      expect(status.retrying?.[0]).toMatchObject({
        attempt: expect.any(Number),
        lastFailure: { status: 'failed', message: 'the audience URL answered 503', nonRetryable: false },
      });
      expect(status.retrying![0]!.attempt).toBeGreaterThan(1);
      const human = await msgflow('campaign', 'status', key);
      expect(human.stdout).toMatch(
        /retrying \w+, attempt \d+: last attempt failed: Error — the audience URL answered 503/,
      );

      await stack.temporal.workflow.getHandle(`campaign:${key}`).terminate('operator stopped it');
      const terminated = await msgflow('campaign', 'status', key, '--json');
      expect(terminated.code).toBe(4);
      expect(JSON.parse(terminated.stdout)).toMatchObject({
        phase: 'terminated',
        failure: { status: 'terminated', kind: 'Terminated', message: 'operator stopped it' },
      });
    },
  );
});
