/** Conversions between the store's epoch milliseconds and the API's timestamps. */
import { formatTimestamp } from '../api/common.js';

export function timestampOf(ms: number): string {
  return formatTimestamp(new Date(ms));
}

/** Start of the UTC calendar month containing `ms` (the spend-cap period). */
export function startOfUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
