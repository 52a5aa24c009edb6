/**
 * `msgflow codec …` as an operator runs it: a real process, configured only by environment variables, in
 * an empty directory (so no .data/dev.env of a local `msgflow dev` leaks in).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, describe, expect, it } from 'vitest';
import { toJsonPayload } from '../../src/codec-server/payload-json.js';
import { generateKey, parseKeyRing } from '../../src/crypto/keyring.js';
import { EncryptionCodec } from '../../src/temporal/codec.js';
import { eventually } from './support.js';

const run = promisify(execFile);
const MAIN = resolve('src/cli/main.ts');
const TSX = pathToFileURL(resolve('node_modules/tsx/dist/loader.mjs')).href;
const cwd = mkdtempSync(join(tmpdir(), 'msgflow-codec-cli-'));
const children: ChildProcess[] = [];

const msgflow = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, ['--import', TSX, MAIN, ...args], { cwd, env: { PATH: process.env.PATH, ...env } });

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

describe('msgflow codec', () => {
  it('generates a key ring entry and a URL-safe token', async () => {
    const [key, token] = await Promise.all([msgflow(['codec', 'key']), msgflow(['codec', 'token'])]);
    expect(parseKeyRing(key.stdout.trim()).keys.size).toBe(1);
    expect(token.stdout.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses to serve without a key or a token, naming the variable', async () => {
    const refusal = (env: Record<string, string>) =>
      msgflow(['codec', 'serve'], env).catch((e: { code: number; stderr: string }) => e);
    const [noKey, noToken, shortToken] = await Promise.all([
      refusal({ MSGFLOW_CODEC_TOKEN: 'a'.repeat(32) }),
      refusal({ MSGFLOW_ENCRYPTION_KEY: generateKey() }),
      refusal({ MSGFLOW_ENCRYPTION_KEY: generateKey(), MSGFLOW_CODEC_TOKEN: 'short' }),
    ]);
    expect(noKey).toMatchObject({ code: 2, stderr: expect.stringContaining('MSGFLOW_ENCRYPTION_KEY is required') });
    expect(noToken).toMatchObject({ code: 2, stderr: expect.stringContaining('MSGFLOW_CODEC_TOKEN is required') });
    expect(shortToken).toMatchObject({ code: 2, stderr: expect.stringMatching(/MSGFLOW_CODEC_TOKEN.*16 characters/s) });
  });

  it('serves decode for the token holder and stops on SIGTERM', async () => {
    const key = `k7:${generateKey()}`;
    const token = 'operator-token-0123456789';
    const child = spawn(process.execPath, ['--import', TSX, MAIN, 'codec', 'serve'], {
      cwd,
      env: {
        PATH: process.env.PATH,
        MSGFLOW_ENCRYPTION_KEY: key,
        MSGFLOW_CODEC_TOKEN: token,
        MSGFLOW_CODEC_PORT: '0',
        MSGFLOW_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const url = await eventually(
      async () => /codec endpoint: (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1],
      'the codec endpoint to listen',
      60_000,
    );

    const [sealed] = await new EncryptionCodec(parseKeyRing(key)).encode([
      defaultPayloadConverter.toPayload({ to: '+12025550100' }),
    ]);
    const decode = (authorization?: string) =>
      fetch(`${url}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ payloads: [toJsonPayload(sealed!)] }),
      });
    const ok = await decode(`Bearer ${token}`);
    expect(ok.status).toBe(200);
    const { payloads } = (await ok.json()) as { payloads: Array<{ data: string }> };
    expect(JSON.parse(Buffer.from(payloads[0]!.data, 'base64').toString())).toEqual({ to: '+12025550100' });
    expect((await decode()).status).toBe(401);

    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).not.toContain(token);
  });
});
