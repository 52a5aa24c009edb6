/**
 * A loopback TCP proxy that can be cut and restored, to take a real server (Temporal) away from a client
 * (the ingress) without stopping it for everyone else. Given several targets it is the one address in front
 * of a replicated tier: `round-robin` spreads connections over them (a load balancer), `failover` sends every
 * connection to the first target that accepts it (one primary, the next when it is gone). A target that
 * refuses a connection is skipped for that connection, so killing a replica is a real failover.
 */
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';
import { Transform } from 'node:stream';

export type ProxyStrategy = 'round-robin' | 'failover';

export interface TcpProxy {
  address: string;
  /** Refuse new connections and drop the open ones. */
  cut(): Promise<void>;
  /** Accept connections again, on the same port. */
  restore(): Promise<void>;
  /**
   * Drop the open connections and accept new ones without ever forwarding them: the client's calls hang until
   * their deadline (a server that stopped answering), where `cut` fails them at once. `release` ends it.
   */
  hold(): void;
  release(): void;
  /** Delay every chunk either way by `ms`, on open connections too (a slow network); 0 ends it. */
  slow(ms: number): void;
  close(): Promise<void>;
  /** Connections made to each target so far, in target order. */
  connectionsPerTarget(): number[];
}

export interface TcpProxyOptions {
  strategy?: ProxyStrategy;
  /** Listen on this port (0: a free one). */
  port?: number;
}

export async function startTcpProxy(targets: string | string[], options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const upstreams = (Array.isArray(targets) ? targets : [targets]).map(splitHostPort);
  const strategy = options.strategy ?? 'round-robin';
  const counts = upstreams.map(() => 0);
  const sockets = new Set<Socket>();
  let server: Server;
  let port = options.port ?? 0;
  let next = 0;
  let slowMs = 0;
  /** A pass-through that holds each chunk `slowMs` (in order) while the proxy is slowed. */
  const slowed = () =>
    new Transform({
      transform(chunk, _encoding, done) {
        if (slowMs <= 0) done(null, chunk);
        else setTimeout(() => done(null, chunk), slowMs);
      },
    });

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };

  /** Tries the targets in order from `first`; pipes the client to the first that accepts. */
  const connect = (client: Socket, first: number, tried = 0): void => {
    if (tried >= upstreams.length || client.destroyed) {
      client.destroy();
      return;
    }
    const index = (first + tried) % upstreams.length;
    const [host, targetPort] = upstreams[index]!;
    const upstream = createConnection({ host, port: targetPort });
    track(upstream);
    const refused = () => connect(client, first, tried + 1);
    upstream.once('error', refused);
    upstream.once('connect', () => {
      upstream.off('error', refused);
      counts[index]!++;
      upstream.on('error', () => upstream.destroy());
      client.pipe(slowed()).pipe(upstream).pipe(slowed()).pipe(client);
      client.resume();
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer({ pauseOnConnect: true }, (client) => {
        track(client);
        client.on('error', () => client.destroy());
        if (holding) return; // tracked, paused, never forwarded
        const first = strategy === 'failover' ? 0 : next++ % upstreams.length;
        connect(client, first);
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

  let holding = false;
  const dropAll = () => {
    for (const s of sockets) s.destroy();
  };

  await listen();
  return {
    hold: () => {
      holding = true;
      dropAll();
    },
    release: () => {
      holding = false;
      dropAll();
    },
    slow: (ms) => {
      slowMs = ms;
    },
    address: `127.0.0.1:${port}`,
    cut: stop,
    restore: listen,
    close: stop,
    connectionsPerTarget: () => [...counts],
  };
}

function splitHostPort(address: string): [string, number] {
  const index = address.lastIndexOf(':');
  return [address.slice(0, index), Number(address.slice(index + 1))];
}
