/**
 * The provider's webhook deliveries as its database holds them (a sandbox started with a `db` file): how many
 * are pending, delivered, failed for good…, and how many batch items still wait to become a delivery. Read
 * straight from the file, since the provider's API does not list deliveries.
 */
import Database from 'better-sqlite3';
import { waitFor } from '../../support/wait-for.js';

export interface DeliveryStates {
  /** Deliveries by state (pending, delivered, failed, cancelled). */
  states: Record<string, number>;
  /** Events waiting for the next batch delivery of a batch endpoint. */
  batchItems: number;
}

export function deliveryStates(sandboxDb: string): DeliveryStates {
  const db = new Database(sandboxDb, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state').all() as {
      state: string;
      n: number;
    }[];
    const { n } = db.prepare('SELECT COUNT(*) AS n FROM batch_items').get() as { n: number };
    return { states: Object.fromEntries(rows.map((r) => [r.state, r.n])), batchItems: n };
  } finally {
    db.close();
  }
}

/** Nothing left for the provider to deliver: no delivery pending, no batch item waiting. */
const settled = ({ states, batchItems }: DeliveryStates) => (states.pending ?? 0) === 0 && batchItems === 0;

/**
 * Waits until the provider has nothing left to deliver (it retries refused deliveries on its own schedule,
 * after a campaign may already have its counts) and returns how the deliveries ended.
 */
export function deliveriesSettled(sandboxDb: string): Promise<DeliveryStates> {
  return waitFor(
    () => {
      const now = deliveryStates(sandboxDb);
      return settled(now) && now;
    },
    'no webhook delivery pending at the provider',
    { timeoutMs: 300_000, intervalMs: 1000 },
  );
}
