/**
 * Commands check their own input before they wait for Temporal: against a server that accepts connections and
 * never answers (a frozen Temporal), a bad argument is refused as bad input, and a good one fails naming the
 * server it could not reach.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMsgflow } from '../support/cli.js';

const key = () => randomBytes(32).toString('base64');

describe('commands while Temporal does not answer', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'cli-without-temporal-'));
  const sockets = new Set<Socket>();
  let frozen: Server;
  let address: string;

  beforeAll(async () => {
    // Accepts and holds every connection, answers nothing: what a stopped (SIGSTOP) server looks like.
    frozen = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => frozen.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(frozen.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => frozen.close(resolve));
    rmSync(cwd, { recursive: true, force: true });
  });

  const msgflow = (...args: string[]) =>
    runMsgflow(args, {
      cwd,
      env: { TEMPORAL_ADDRESS: address, MSGFLOW_OTP_HASH_KEY: key(), MSGFLOW_ENCRYPTION_KEY: key() },
    });

  it('refuses a bad number as bad input, naming it', async () => {
    const result = await msgflow('sms', 'send', '--to', 'nonsense', '--sender', 'ACME', '--message', 'hi');
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/recipients/);
    expect(result.stderr).not.toMatch(/cannot connect/);
  });

  it('refuses bad OTP and voice input the same way', async () => {
    const otp = await msgflow('otp', 'send', '--purpose', 'Login!', '--to', '2348012345678');
    expect(otp.code, otp.stderr).toBe(2);
    expect(otp.stderr).toMatch(/purpose/);
    const voice = await msgflow('voice', 'call', '--to', '12', '--message', 'hello');
    expect(voice.code, voice.stderr).toBe(2);
    expect(voice.stderr).toMatch(/recipient/);
  });

  it('fails a good send naming the server it cannot reach', async () => {
    const result = await msgflow('sms', 'send', '--to', '2348012345678', '--sender', 'ACME', '--message', 'hi');
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`cannot connect to Temporal at ${address}`);
  });
});
