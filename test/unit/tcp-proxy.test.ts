/**
 * The loopback proxy the cluster run puts in front of each replicated tier: round-robin spreads connections,
 * failover keeps to the first target while it accepts, and a target that is gone is skipped (real servers on
 * loopback, each answering with its own name).
 */
import { type AddressInfo, createConnection, createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const servers: Server[] = [];
const proxies: TcpProxy[] = [];

async function namedServer(name: string): Promise<{ address: string; server: Server }> {
  const server = createServer((socket) => socket.end(name));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function ask(address: string): Promise<string> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = createConnection({ host: host!, port: Number(port) });
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('startTcpProxy', () => {
  it('spreads connections over its targets in turn (round-robin)', async () => {
    const [a, b] = [await namedServer('a'), await namedServer('b')];
    const proxy = await startTcpProxy([a.address, b.address]);
    proxies.push(proxy);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await ask(proxy.address));
    expect(answers).toEqual(['a', 'b', 'a', 'b']);
    expect(proxy.connectionsPerTarget()).toEqual([2, 2]);
  });

  it('keeps to the first target while it accepts, and moves to the next when it is gone (failover)', async () => {
    const [a, b] = [await namedServer('a'), await namedServer('b')];
    const proxy = await startTcpProxy([a.address, b.address], { strategy: 'failover' });
    proxies.push(proxy);
    expect([await ask(proxy.address), await ask(proxy.address)]).toEqual(['a', 'a']);
    await new Promise((resolve) => a.server.close(resolve));
    expect(await ask(proxy.address)).toBe('b');
    expect(proxy.connectionsPerTarget()).toEqual([2, 1]);
  });

  it('closes the client connection when no target accepts', async () => {
    const a = await namedServer('a');
    await new Promise((resolve) => a.server.close(resolve));
    const proxy = await startTcpProxy([a.address]);
    proxies.push(proxy);
    expect(await ask(proxy.address)).toBe('');
  });
});
