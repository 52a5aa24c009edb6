/**
 * A server command whose port another process holds (e.g. a running `msgflow dev`) ends with the port, what
 * wanted it and the setting that moves it, instead of Node's bare "listen EADDRINUSE".
 */
import { EXIT_CODES, fail } from './common.js';

/** Awaits a server's start; a port in use ends the command (exit status 1) naming `what` and `setting`. */
export async function listening<T>(start: Promise<T>, what: string, setting: string): Promise<T> {
  try {
    return await start;
  } catch (error) {
    const { code, port, address } = error as NodeJS.ErrnoException & { port?: number; address?: string };
    if (code !== 'EADDRINUSE') throw error;
    return fail(
      `port ${port} on ${address} (${what}, ${setting}) is in use: stop what holds it (a msgflow dev?) or choose another port`,
      EXIT_CODES.failed,
    );
  }
}
