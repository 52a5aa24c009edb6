/**
 * A command's Temporal client. Nothing waits for Temporal before the command has checked its input (the facade
 * checks it before its first call), so a typo is answered at once, exit 2, even while Temporal is down; an
 * unreachable Temporal still fails the command within the connect timeout, naming the address.
 */
import type { Client } from '@temporalio/client';
import { ensureReachable, lazyClient } from '../temporal/connection.js';

export async function withClient<T>(use: (client: Client) => Promise<T>): Promise<T> {
  const client = await lazyClient();
  // Checked beside the command rather than before it: an answer settles nothing, a failure ends the command.
  const unreachable = ensureReachable(client).then(() => new Promise<never>(() => {}));
  try {
    return await Promise.race([use(client), unreachable]);
  } finally {
    await client.connection.close();
  }
}
