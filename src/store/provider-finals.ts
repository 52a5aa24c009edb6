/**
 * Final states learned from the provider rather than from a webhook: a wait window's last look at a message
 * (GET /messages/{id}), and a voice call followed to its end (GET /voice/{id}; voice has no events).
 *
 * The rule is the one webhooks follow: the first final state recorded for an id stands, whichever way it
 * came, and a later one (webhook or provider) changes nothing. The caller gets the state that stands, so the
 * workflow acts on what the store holds. The asking workflow's waiter is marked told in the same transaction:
 * it has its answer, so the relay never tells it again; other workflows waiting for the same message become
 * untold, for the relay to tell, as a webhook would have made them.
 */
import { isFinalStatus, isFinalVoiceStatus } from '../api/constants.js';
import type { Executor } from './driver.js';
import { checkId, checkText, firstFinalStands, type MessageRow, type StoreContext, storedFinalOf } from './sql.js';
import { markUntold } from './waiters.js';
import { type MessageStore, type ProviderFinalRecord, StoreInputError } from './types.js';

export function providerFinals({ driver, personal }: StoreContext): Pick<MessageStore, 'recordProviderFinal'> {
  return {
    async recordProviderFinal(record) {
      checkRecord(record);
      const { providerMessageId, status, timestamp, workflowId, number } = record;
      const now = Date.now();
      return driver.transaction(async (tx) => {
        const [row] = await tx.all<MessageRow>(
          `INSERT INTO messages (provider_message_id, final_status, final_timestamp, final_source, final_recorded_at,
             recipient, recipient_lookup, first_seen_at, last_seen_at)
           VALUES (?, ?, ?, 'provider', ?, ?, ?, ?, ?)
           ON CONFLICT (provider_message_id) DO UPDATE SET
             ${firstFinalStands(['final_timestamp', 'final_source', 'final_recorded_at'])},
             recipient = COALESCE(messages.recipient, excluded.recipient),
             recipient_lookup = COALESCE(messages.recipient_lookup, excluded.recipient_lookup),
             last_seen_at = excluded.last_seen_at
           RETURNING provider_message_id, final_status, final_timestamp, final_event_id, final_source`,
          [
            providerMessageId,
            status,
            timestamp,
            now,
            number ? personal.seal(number, providerMessageId) : null,
            number ? personal.lookup(number) : null,
            now,
            now,
          ],
        );
        if (isFinalStatus(status)) await settleWaiters(tx, providerMessageId, workflowId ?? null, now);
        return storedFinalOf(row!)!;
      });
    },
  };
}

/** The asking workflow is told (it has the answer); the message's other waiters are now untold, for the relay. */
async function settleWaiters(tx: Executor, id: string, askedBy: string | null, now: number): Promise<void> {
  if (askedBy !== null)
    await tx.run(
      'UPDATE waiters SET told_at = ?, untold_since = NULL WHERE provider_message_id = ? AND workflow_id = ?',
      [now, id, askedBy],
    );
  await markUntold(tx, [{ provider_message_id: id }], now);
}

function checkRecord(record: ProviderFinalRecord): void {
  checkId(record?.providerMessageId);
  checkText('status', record.status, 50);
  if (!isFinalStatus(record.status) && !isFinalVoiceStatus(record.status))
    throw new StoreInputError(`"${record.status}" is not a final state of a message or a call`);
  checkText('timestamp', record.timestamp, 100);
  if (record.workflowId !== undefined) checkText('workflowId', record.workflowId, 1000);
  if (record.number !== undefined) checkText('number', record.number, 50);
}
