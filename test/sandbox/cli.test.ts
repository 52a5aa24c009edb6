/** `msgflow sandbox` as a user runs it: start (prints the base URL), admin helpers, clear errors for bad input. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, eventually } from './helpers.js';
import { startReceiver } from './receiver.js';

const root = resolve(import.meta.dirname, '../..');
const tsx = join(root, 'node_modules/.bin/tsx');
const main = join(root, 'src/cli/main.ts');
const ADMIN_TOKEN = 'cli-test-admin-token-0123456789';
// A directory of its own, so no .data/dev.env of a developer's `msgflow dev` run leaks in.
const cwd = mkdtempSync(join(tmpdir(), 'sandbox-cli-'));
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MSGFLOW_')));

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(tsx, [main, ...args], { cwd, env: { ...baseEnv, ...env } }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The base URL a starting sandbox prints (`sandbox: http://…/v1`); fails if the process exits first. */
function printedBaseUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((found, fail) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /sandbox: (http:\/\/\S+\/v1)/.exec(out);
      if (match) found(match[1]!);
    });
    child.once('exit', (code) => fail(new Error(`sandbox exited with ${code}: ${out}`)));
  });
}

describe('msgflow sandbox', () => {
  let server: ChildProcess;
  let baseUrl: string;
  let helperEnv: Record<string, string>;
  beforeAll(async () => {
    server = spawn(
      tsx,
      [main, 'sandbox', '--port', '0', '--db', ':memory:', '--admin-token', ADMIN_TOKEN, '--carrier-submit', '10ms'],
      {
        cwd,
        env: baseEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    baseUrl = await printedBaseUrl(server);
    helperEnv = { MSGFLOW_SANDBOX_URL: baseUrl.replace(/\/v1$/, ''), MSGFLOW_SANDBOX_ADMIN_TOKEN: ADMIN_TOKEN };
  });
  afterAll(async () => {
    if (server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(cwd, { recursive: true, force: true });
  });

  it('starts, prints its base URL, and the helpers set up an account that can send', { timeout: 180_000 }, async () => {
    expect((await fetch(baseUrl.replace(/\/v1$/, '/healthz'))).status).toBe(200);
    const account = JSON.parse(
      (await run(['sandbox', 'account', 'create', '--name', 'CLI', '--balance', '100', '--json'], helperEnv)).stdout,
    );
    expect(account).toMatchObject({ name: 'CLI', balance: 100 });
    const created = JSON.parse(
      (
        await run(
          ['sandbox', 'token', 'create', '--account', account.id, '--scopes', 'sms:send,balance', '--json'],
          helperEnv,
        )
      ).stdout,
    );
    expect(created.scopes).toEqual(['sms:send', 'balance']);
    expect((await run(['sandbox', 'sender', 'add', '--account', account.id, '--sender', 'ACME'], helperEnv)).code).toBe(
      0,
    );
    expect((await run(['sandbox', 'credit', '--account', account.id, '--amount', '50'], helperEnv)).code).toBe(0);
    const api = apiFor(baseUrl, created.token);
    expect(
      (await api('POST', '/sms/send', { recipients: ['12025550180'], sender: 'ACME', message: 'from the CLI test' }))
        .status,
    ).toBe(202);
    expect((await api('GET', '/balance')).body.data.balance).toBe(147);
    const inbox = JSON.parse((await run(['sandbox', 'inbox', '--to', '12025550180', '--json'], helperEnv)).stdout);
    expect(inbox[0].text).toBe('from the CLI test');
    // The human form: one entry a line, the text beneath.
    const human = await run(['sandbox', 'inbox', '--to', '12025550180'], helperEnv);
    expect(human.stdout).toMatch(/ sms {2}from ACME {2}\S+\n {2}from the CLI test\n/);
  });

  it(
    'reads webhook deliveries with their attempts, redelivers, forces an outcome, prints a console link',
    { timeout: 180_000 },
    async () => {
      const receiver = await startReceiver();
      try {
        const account = JSON.parse(
          (await run(['sandbox', 'account', 'create', '--name', 'Hooks', '--balance', '100', '--json'], helperEnv))
            .stdout,
        );
        const token = JSON.parse(
          (
            await run(
              ['sandbox', 'token', 'create', '--account', account.id, '--scopes', 'sms:send,webhooks', '--json'],
              helperEnv,
            )
          ).stdout,
        );
        const api = apiFor(baseUrl, token.token);
        expect((await api('POST', '/webhooks', { url: receiver.url })).status).toBe(201);
        await run(['sandbox', 'sender', 'add', '--account', account.id, '--sender', 'ACME'], helperEnv);
        const forced = await run(
          ['sandbox', 'outcome', 'set', '--to', '12025550181', '--outcome', 'rejected', '--delay', '0s', '--json'],
          helperEnv,
        );
        expect(JSON.parse(forced.stdout)).toMatchObject({ mobile_number: '+12025550181', outcome: 'rejected' });
        const sent = await api('POST', '/sms/send', { recipients: ['12025550181'], sender: 'ACME', message: 'hooks' });
        expect(sent.status).toBe(202);
        await eventually(
          async () => receiver.received.length,
          (n) => n === 1,
        );

        const deliveries = JSON.parse(
          (await run(['sandbox', 'deliveries', '--account', account.id, '--state', 'delivered', '--json'], helperEnv))
            .stdout,
        );
        expect(deliveries).toHaveLength(1);
        expect(deliveries[0]).toMatchObject({
          event_types: ['message.rejected'],
          attempts: [{ attempt: 1, status: 200 }],
        });
        const redelivered = await run(['sandbox', 'delivery', 'redeliver', deliveries[0].id, '--json'], helperEnv);
        expect(JSON.parse(redelivered.stdout).state).toBe('pending');
        await eventually(
          async () => receiver.received.length,
          (n) => n === 2,
        );
        const shown = JSON.parse(
          (await run(['sandbox', 'delivery', 'show', deliveries[0].id, '--json'], helperEnv)).stdout,
        );
        expect(shown.attempts.map((a: { status: number }) => a.status)).toEqual([200, 200]);

        // The human forms: one line a delivery; the attempts beneath it.
        const listed = await run(['sandbox', 'deliveries', '--account', account.id], helperEnv);
        expect(listed.stdout).toContain(`${deliveries[0].id}  delivered  message.rejected`);
        const human = await run(['sandbox', 'delivery', 'show', deliveries[0].id], helperEnv);
        expect(human.stdout).toMatch(/\n {2}attempt 2 {2}\S+ {2}200 {2}\d+ ms/);
        const tokens = await run(['sandbox', 'token', 'list', '--account', account.id, '--json'], helperEnv);
        expect(JSON.parse(tokens.stdout)).toMatchObject([{ id: token.id, scopes: ['sms:send', 'webhooks'] }]);
        expect(tokens.stdout).not.toContain(token.token);

        const link = await run(['sandbox', 'console-link'], helperEnv);
        expect(link.stdout.trim()).toMatch(/\/dashboard\/sign-in\/link\?code=/);
        expect(link.stdout).not.toContain(ADMIN_TOKEN);
      } finally {
        await receiver.close();
      }
    },
  );

  it('explains bad input instead of crashing', { timeout: 180_000 }, async () => {
    const scopes = await run(
      ['sandbox', 'token', 'create', '--account', 'acct_x', '--scopes', 'sms:send,root'],
      helperEnv,
    );
    expect(scopes.code).not.toBe(0);
    expect(scopes.stderr).toMatch(/unknown scope root/);
    const unknownAccount = await run(['sandbox', 'credit', '--account', 'acct_x', '--amount', '5'], helperEnv);
    expect(unknownAccount.code).toBe(1);
    expect(unknownAccount.stderr).toMatch(/404 not_found/);
    const port = await run(['sandbox', '--port', 'eighty']);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/--port \/ MSGFLOW_SANDBOX_PORT/);
    const noToken = await run(['sandbox', 'inbox', '--to', '12025550180'], {
      MSGFLOW_SANDBOX_URL: helperEnv.MSGFLOW_SANDBOX_URL!,
    });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/MSGFLOW_SANDBOX_ADMIN_TOKEN/);
    const noUnit = await run(['sandbox', '--port', '0', '--db', ':memory:', '--tick', '100']);
    expect(noUnit.code).toBe(2);
    expect(noUnit.stderr).toContain('--tick / MSGFLOW_SANDBOX_TICK: "100" has no unit: write 100s, 100m, …');
    const renamed = await run(['sandbox', '--port', '0', '--db', ':memory:'], { MSGFLOW_SANDBOX_TICK_MS: '100' });
    expect(renamed.code).toBe(2);
    expect(renamed.stderr).toContain(
      'MSGFLOW_SANDBOX_TICK_MS: is no longer read: use MSGFLOW_SANDBOX_TICK (a duration, e.g. 100ms)',
    );
  });
});

describe('npm run msgflow', () => {
  // A process manager (or `timeout`) stops the npm process alone: the signal has to reach msgflow itself, or
  // its servers outlive npm and keep their ports.
  it('stops the command when npm alone gets SIGTERM', { timeout: 120_000 }, async () => {
    const npm = spawn(
      'npm',
      ['run', '--silent', 'msgflow', '--', 'sandbox', '--port', '0', '--db', ':memory:', '--admin-token', ADMIN_TOKEN],
      // Its own process group, so a failed run can be cleaned up whole.
      { cwd: root, env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    try {
      const health = (await printedBaseUrl(npm)).replace(/\/v1$/, '/healthz');
      expect((await fetch(health)).status).toBe(200);

      const npmExited = new Promise((resolve) => npm.once('exit', resolve));
      process.kill(npm.pid!, 'SIGTERM');
      await npmExited;
      const answering = () =>
        fetch(health).then(
          () => true,
          () => false,
        );
      await eventually(answering, (up) => !up, 30_000);
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    }
  });
});
