/**
 * A loopback TCP proxy that can be cut and restored, to take a real server (Temporal) away from a client
 * (the ingress) without stopping it for everyone else.
 */
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  address: string;
  /** Refuse new connections and drop the open ones. */
  cut(): Promise<void>;
  /** Accept connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const [targetHost, targetPort] = splitHostPort(target);
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = createConnection({ host: targetHost, port: targetPort });
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });

  await listen();
  return { address: `127.0.0.1:${port}`, cut: stop, restore: listen, close: stop };
}

function splitHostPort(address: string): [string, number] {
  const index = address.lastIndexOf(':');
  return [address.slice(0, index), Number(address.slice(index + 1))];
}
