/**
 * The ports `msgflow dev` binds, checked before it starts anything: a busy one is named with the flag that
 * moves it, instead of a failure deep inside a component ("Failed to start prometheus metrics exporter").
 */
import { createServer } from 'node:net';

export interface DevPort {
  /** What listens there, e.g. "worker metrics". */
  what: string;
  flag: string;
  port: number;
}

/** Why `port` cannot be bound on `host`, or null when it can (it is released again at once). */
function bindError(host: string, port: number): Promise<string | null> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => done(null)));
  });
}

/** Each port of `ports` that cannot be bound, with the reason (EADDRINUSE: another process holds it). */
export async function unavailablePorts(
  ports: readonly DevPort[],
  host = '127.0.0.1',
): Promise<Array<DevPort & { reason: string }>> {
  const found = [];
  for (const p of ports) {
    if (p.port === 0) continue; // any free port
    const reason = await bindError(host, p.port);
    if (reason) found.push({ ...p, reason });
  }
  return found;
}

export function unavailablePortsMessage(ports: ReadonlyArray<DevPort & { reason: string }>): string {
  const lines = ports.map(
    ({ what, flag, port, reason }) =>
      `  port ${port} (${what}, ${flag}) ${reason === 'EADDRINUSE' ? 'is in use' : `cannot be bound: ${reason}`}`,
  );
  return [
    `msgflow dev cannot start; nothing was started:`,
    ...lines,
    'Stop what holds them (another msgflow dev?) or choose other ports with the flags named, e.g. ' +
      `${ports[0]!.flag} ${ports[0]!.port + 1}.`,
  ].join('\n');
}
