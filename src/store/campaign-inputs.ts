/**
 * What a campaign's retry needs, kept beside its messages so it outlives the campaign's Temporal history: the
 * input it started with, each recipient's audience fields when its message was personal, and who to send to
 * again. Inputs and fields hold texts and numbers: sealed when a key ring is configured.
 */
import type { SqlValue } from './driver.js';
import {
  checkLimit,
  checkNumber,
  checkText,
  chunks,
  decodeCursor,
  encodeCursor,
  list,
  rows,
  type StoreContext,
  uniqueBy,
} from './sql.js';
import { type CampaignInputStore, StoreInputError } from './types.js';

const MAX_KEY = 1000;
const MAX_INPUT = 1_000_000;

function inputContext(campaignKey: string): string {
  return `campaign-input:${campaignKey}`;
}

function rowContext(campaignKey: string, lookup: string): string {
  return `campaign-row:${campaignKey}\n${lookup}`;
}

export function campaignInputStore({ driver, personal }: StoreContext): CampaignInputStore {
  return {
    async keep(campaignKey, input) {
      checkText('campaignKey', campaignKey, MAX_KEY);
      const json = JSON.stringify(input);
      if (json === undefined || json.length > MAX_INPUT) throw new StoreInputError('the input must be JSON');
      await driver.transaction((tx) =>
        tx.run(
          `INSERT INTO campaign_inputs (campaign_key, input, kept_at) VALUES (?, ?, ?)
           ON CONFLICT (campaign_key) DO UPDATE SET input = excluded.input, kept_at = excluded.kept_at`,
          [campaignKey, personal.seal(json, inputContext(campaignKey)), Date.now()],
        ),
      );
    },

    async input(campaignKey) {
      checkText('campaignKey', campaignKey, MAX_KEY);
      const [row] = await driver.read((tx) =>
        tx.all<{ input: string }>('SELECT input FROM campaign_inputs WHERE campaign_key = ?', [campaignKey]),
      );
      return row ? (JSON.parse(personal.open(row.input, inputContext(campaignKey))) as unknown) : null;
    },

    async keepRows(campaignKey, recipients) {
      checkText('campaignKey', campaignKey, MAX_KEY);
      recipients.forEach((r) => checkNumber(r.number));
      const unique = uniqueBy(
        recipients.map((r) => ({ lookup: personal.lookup(r.number), fields: JSON.stringify(r.fields ?? {}) })),
        (r) => r.lookup,
      );
      if (unique.length === 0) return;
      await driver.transaction(async (tx) => {
        for (const batch of chunks(unique))
          await tx.run(
            `INSERT INTO campaign_rows (campaign_key, recipient_lookup, fields) VALUES ${rows(batch.length, 3)}
             ON CONFLICT (campaign_key, recipient_lookup) DO NOTHING`,
            batch.flatMap((r) => [campaignKey, r.lookup, personal.seal(r.fields, rowContext(campaignKey, r.lookup))]),
          );
      });
    },

    async retryRecipients({ campaignKey, statuses, after, limit }) {
      checkText('campaignKey', campaignKey, MAX_KEY);
      checkLimit(limit);
      if (statuses.length === 0 || statuses.includes('delivered'))
        throw new StoreInputError('a retry sends to failed states only, never delivered');
      statuses.forEach((s) => checkText('status', s, 50));
      const params: SqlValue[] = [campaignKey, ...statuses];
      if (after !== undefined) params.push(decodeCursor(after));
      // The rule of who a retry reaches: a final state asked for, and no delivered message to the same number.
      const found = await driver.read((tx) =>
        tx.all<{ provider_message_id: string; recipient: string; lookup: string; fields: string | null }>(
          `SELECT m.provider_message_id, m.recipient, m.recipient_lookup AS lookup, r.fields
             FROM messages m
             LEFT JOIN campaign_rows r ON r.campaign_key = m.campaign_key AND r.recipient_lookup = m.recipient_lookup
            WHERE m.campaign_key = ? AND m.final_status IN (${list(statuses.length)})
              AND m.recipient IS NOT NULL AND m.recipient_lookup IS NOT NULL
              ${after === undefined ? '' : 'AND m.provider_message_id > ?'}
              AND NOT EXISTS (SELECT 1 FROM messages d
                               WHERE d.campaign_key = m.campaign_key AND d.recipient_lookup = m.recipient_lookup
                                 AND d.final_status = 'delivered')
            ORDER BY m.provider_message_id LIMIT ?`,
          [...params, limit + 1],
        ),
      );
      const page = found.slice(0, limit).map((r) => ({
        number: personal.open(r.recipient, r.provider_message_id),
        fields:
          r.fields === null
            ? null
            : (JSON.parse(personal.open(r.fields, rowContext(campaignKey, r.lookup))) as Record<string, string>),
      }));
      const last = found.length > limit ? found[limit - 1] : undefined;
      return { rows: page, next: last ? encodeCursor(last.provider_message_id) : null };
    },
  };
}
