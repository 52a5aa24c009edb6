/**
 * Erasing one person's number: what msgflow's message store holds is removed (an opt-out stays, without the
 * number, so the person is still never sent to), and the answer says what remains elsewhere and until when.
 */
import type { ErasureResult, MessageStore } from '../store/index.js';
import { validNumbers } from './suppressions.js';

export interface Erasure {
  /** The number erased (+E.164). */
  number: string;
  store: ErasureResult;
  /** What still holds the number, outside msgflow's reach or by design. */
  remains: string[];
}

/** Where the number may remain after an erasure: one list, shown by the CLI and documented in docs/operations.md. */
export function remainingCopies(store: ErasureResult): string[] {
  return [
    store.suppressed
      ? store.suppressionKeptAs === 'keyed-hash'
        ? 'the suppression list: the opt-out stays, as a keyed hash of the number, so it is never sent to again'
        : 'the suppression list: the opt-out stays, as the number itself (no MSGFLOW_ENCRYPTION_KEY configured, so lookups are by number)'
      : 'the suppression list: the number was not on it',
    'Temporal: the inputs and results of the workflows that sent to it (sendSms, campaigns with an inline list, schedules) ' +
      "stay in their histories until the namespace's retention period after each run closes (encrypted when a key is configured); " +
      'a schedule whose audience lists the number keeps it until you update or delete the schedule',
    "the provider: its own message records, delivery logs and ledger, under the provider's retention: ask the provider",
    'your audience files, URLs and loaders: msgflow keeps no copy of them; remove the number at their source',
  ];
}

export async function eraseNumber(store: Pick<MessageStore, 'eraseNumber'>, number: string): Promise<Erasure> {
  const [valid] = validNumbers([number]);
  const result = await store.eraseNumber(valid!);
  return { number: valid!, store: result, remains: remainingCopies(result) };
}
