/** Starts an HTTP app on host:port (0 = any free port) and says where it listens: shared by every msgflow server. */
import type { RequestListener, Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  server: Server;
  /** e.g. http://127.0.0.1:4020 (IPv6 hosts bracketed) */
  url: string;
  /** Stops accepting connections; in-flight requests finish, idle keep-alive connections are closed. */
  close(): Promise<void>;
}

export async function listen(app: RequestListener, host: string, port: number): Promise<Listening> {
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: actualPort } = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
