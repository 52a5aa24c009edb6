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

  it('delays what passes while slowed, keeping it whole and in order, and stops delaying when told', async () => {
    const server = createServer((socket) => socket.pipe(socket));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = await startTcpProxy(`127.0.0.1:${(server.address() as AddressInfo).port}`);
    proxies.push(proxy);
    const echo = (text: string[]) =>
      new Promise<string>((resolve, reject) => {
        const [host, port] = proxy.address.split(':');
        const socket = createConnection({ host: host!, port: Number(port) }, () => {
          for (const part of text) socket.write(part);
        });
        // The proxy does not keep half-closed connections: the client waits for the whole echo, then leaves.
        let answer = '';
        socket.on('data', (chunk) => {
          answer += chunk.toString();
          if (answer.length >= text.join('').length) {
            socket.destroy();
            resolve(answer);
          }
        });
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
    proxy.slow(200);
    const started = Date.now();
    expect(await echo(['one ', 'two ', 'three'])).toBe('one two three');
    // At least one delay each way (a lower bound: a timer never fires early).
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    proxy.slow(0);
    expect(await echo(['four'])).toBe('four');
  });
});
