/** A server command on a port another process holds names the port and the setting that moves it. */
import { createServer, type Server } from 'node:net';
import { CommanderError } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listening } from '../../src/cli/busy-port.js';

function listen(server: Server, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port }, () => resolve(server));
  });
}

describe('listening', () => {
  const servers: Server[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    for (const s of servers.splice(0)) s.close();
  });

  it('ends the command with exit status 1, naming the busy port and its setting', async () => {
    const holder = await listen(createServer(), 0);
    servers.push(holder);
    const port = (holder.address() as { port: number }).port;
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);

    const ended = await listening(listen(createServer(), port), 'sandbox', '--port or MSGFLOW_SANDBOX_PORT').then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(ended).toBeInstanceOf(CommanderError);
    expect((ended as CommanderError).exitCode).toBe(1);
    expect(printed.mock.calls.map((call) => call.join(' '))).toEqual([
      `port ${port} on 127.0.0.1 (sandbox, --port or MSGFLOW_SANDBOX_PORT) is in use: stop what holds it (a msgflow dev?) or choose another port`,
    ]);
  });

  it('passes a started server through and rethrows other errors', async () => {
    const server = await listening(listen(createServer(), 0), 'ingress', 'MSGFLOW_INGRESS_PORT');
    servers.push(server);
    expect(server.listening).toBe(true);
    const other = new Error('bad settings');
    await expect(listening(Promise.reject(other), 'ingress', 'MSGFLOW_INGRESS_PORT')).rejects.toBe(other);
  });
});
