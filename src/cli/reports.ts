/**
 * What the message store knows, from the command line: a campaign's per-recipient report and one message
 * found by its provider_message_id. Read from the store the worker and ingress use (MSGFLOW_DATABASE_URL, or
 * the SQLite file of `msgflow dev`).
 */
import { type Command, Option } from 'commander';
import type { ReportRow, StoredMessage } from '../store/index.js';
import { CampaignReports } from '../starter/reports.js';
import { type CampaignRelations, campaignRelations } from '../starter/campaign-retry.js';
import { fail, type JsonFlag, printResult, withJson } from './common.js';
import { withStore } from './store.js';

// `source` last: readers that took the first five columns by position keep working.
const REPORT_COLUMNS = ['provider_message_id', 'number', 'status', 'final', 'timestamp', 'source'] as const;

function reportRecord(row: ReportRow): Record<(typeof REPORT_COLUMNS)[number], string | boolean | null> {
  return {
    provider_message_id: row.providerMessageId,
    number: row.number,
    status: row.status,
    final: row.final,
    timestamp: row.timestamp,
    source: row.source,
  };
}

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
function csvField(value: string | boolean | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** How a campaign and its retry name each other: `retry of <key>`, `retried by <key>:retry`. */
export function formatRelations({ retryOf, retriedBy }: CampaignRelations): string[] {
  return [...(retryOf ? [`  retry of ${retryOf}`] : []), ...(retriedBy ? [`  retried by ${retriedBy}`] : [])];
}

export function addCampaignReportCommand(campaign: Command): void {
  withJson(
    campaign
      .command('report <key>')
      .description("Each recipient's provider_message_id, number, state and time, from the message store")
      .option('--status <state>', 'only recipients in this state (a final one, or e.g. sent)')
      .addOption(
        new Option('--format <format>', 'csv (with a header row) or ndjson (one JSON object a line)')
          .choices(['csv', 'ndjson'])
          .default('csv'),
      ),
  ).action(async (key: string, flags: JsonFlag & { status?: string; format: 'csv' | 'ndjson' }) => {
    await withStore(async (store) => {
      const rows = new CampaignReports(store).rows(key, { status: flags.status });
      const relations = await campaignRelations(store, key);
      if (flags.json) {
        const all: ReturnType<typeof reportRecord>[] = [];
        for await (const row of rows) all.push(reportRecord(row));
        console.log(JSON.stringify({ campaignKey: key, ...relations, rows: all }, null, 2));
        return;
      }
      // On stderr: stdout stays the rows alone, as a file of them.
      for (const line of formatRelations(relations)) console.error(`campaign ${key}: ${line.trim()}`);
      if (flags.format === 'csv') console.log(REPORT_COLUMNS.join(','));
      for await (const row of rows) {
        const record = reportRecord(row);
        console.log(
          flags.format === 'csv' ? REPORT_COLUMNS.map((c) => csvField(record[c])).join(',') : JSON.stringify(record),
        );
      }
    });
  });
}

function describeMessage(m: StoredMessage): string[] {
  const when = (ms: number) => new Date(ms).toISOString();
  return [
    `message ${m.providerMessageId}`,
    `  state:     ${m.final ? `${m.final.status} (final, ${m.final.timestamp}, from the ${m.final.source})` : (m.lastStatus ?? 'nothing heard yet')}`,
    `  number:    ${m.number ?? '-'}`,
    `  campaign:  ${m.campaignKey ?? '-'}`,
    `  seen:      first ${when(m.firstSeenAt)}, last ${when(m.lastSeenAt)}`,
    ...m.waiters.flatMap((w) => [
      `  waiter:    ${w.workflowId} since ${when(w.registeredAt)}${w.releasedAt ? ' (released)' : ''}`,
      ...(w.untoldSince === null ? [] : [`             its outcome waits to be told (since ${when(w.untoldSince)})`]),
      ...(w.refused
        ? [
            `             Temporal refused its signals ${w.refused.refusals} time(s) in a row` +
              `${w.refused.reason ? ` (${w.refused.reason})` : ''}; next try ${when(w.refused.retryAt)}`,
          ]
        : []),
    ]),
  ];
}

export function registerMessageCommands(message: Command): void {
  withJson(
    message
      .command('show <providerMessageId>')
      .description('Its state, number, campaign and the workflows waiting for it'),
  ).action(async (id: string, flags: JsonFlag) => {
    await withStore(async (store) => {
      const found = await store.message(id);
      if (!found) {
        fail(`no message ${id} in the message store`, 1);
      }
      printResult(flags, found, () => describeMessage(found));
    });
  });
}
