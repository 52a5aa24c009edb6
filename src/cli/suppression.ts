/**
 * `msgflow suppression …`: the opt-out list in the message store (add, remove, list, import from a file), and
 * `msgflow data erase <number>`: one person's number out of the store, and what remains where. `list` prints
 * numbers on stdout for the operator who asked for them; nothing here logs a number.
 */
import { type Command, Option } from 'commander';
import { AudienceFormat } from '../api/campaign-io.js';
import { eraseNumber } from '../starter/erasure.js';
import { Suppressions } from '../starter/suppressions.js';
import type { SuppressionRow } from '../store/index.js';
import { delimiter } from './campaign.js';
import { invalidLine, type JsonFlag, positiveInt, printResult, withJson } from './common.js';
import { withStore } from './store.js';

interface NumberFlags extends JsonFlag {
  defaultCountry?: string;
  reason?: string;
}

const countryOption = () =>
  new Option('--default-country <code>', 'ISO 3166 country (e.g. NG) of numbers written in local form').argParser(
    (value: string) => value.trim().toUpperCase(),
  );
const reasonOption = () =>
  new Option('--reason <text>', 'where the opt-out came from, e.g. "replied STOP" (no personal data)');

function describeRow(row: SuppressionRow): string {
  const number = row.number ?? '(erased: kept as its lookup value only)';
  return `${number}  ${new Date(row.addedAt).toISOString()}${row.reason ? `  ${row.reason}` : ''}`;
}

export function registerSuppressionCommands(suppression: Command): void {
  withJson(
    suppression
      .command('add <numbers...>')
      .description('Add numbers (international, or local with --default-country)')
      .addOption(reasonOption())
      .addOption(countryOption()),
  ).action(async (numbers: string[], flags: NumberFlags) => {
    await withStore(async (store) => {
      const result = await new Suppressions(store).add(numbers, flags);
      printResult(flags, result, () => `added ${result.added}, already listed ${result.alreadyListed}`);
    });
  });

  withJson(
    suppression
      .command('remove <numbers...>')
      .description('Take numbers off the list: they can be sent to again')
      .addOption(countryOption()),
  ).action(async (numbers: string[], flags: NumberFlags) => {
    await withStore(async (store) => {
      const result = await new Suppressions(store).remove(numbers, flags);
      printResult(flags, result, () => `removed ${result.removed}, not listed ${result.notListed}`);
    });
  });

  withJson(
    suppression
      .command('list')
      .description('Every opt-out, oldest first: number, when it was added, why (numbers in clear, for you only)')
      .option('--limit <n>', 'at most this many', positiveInt('--limit')),
  ).action(async (flags: JsonFlag & { limit?: number }) => {
    await withStore(async (store) => {
      const rows: SuppressionRow[] = [];
      for await (const row of new Suppressions(store).rows()) {
        if (flags.limit !== undefined && rows.length >= flags.limit) break;
        rows.push(row);
      }
      printResult(flags, { rows }, () => (rows.length ? rows.map(describeRow) : 'the suppression list is empty'));
    });
  });

  withJson(
    suppression
      .command('import <file>')
      .description('Add every number of a CSV, NDJSON or plain-text file, read the way campaign audiences are')
      .addOption(new Option('--format <format>', 'when the file name does not tell').choices(AudienceFormat.options))
      .option('--column <name>', 'CSV column (or NDJSON field) holding the number')
      .option('--delimiter <char>', 'CSV field separator: , ; | or tab (default: detected)', delimiter)
      .addOption(reasonOption())
      .addOption(countryOption()),
  ).action(
    async (file: string, flags: NumberFlags & { format?: AudienceFormat; column?: string; delimiter?: string }) => {
      await withStore(async (store) => {
        const { format, column, delimiter: separator } = flags;
        const result = await new Suppressions(store).import(
          { path: file, format, column, delimiter: separator },
          flags,
        );
        printResult(flags, result, () => [
          `read ${result.read}: added ${result.added}, already listed ${result.alreadyListed}, duplicates ${result.duplicates}, invalid ${result.invalidCount}`,
          ...result.invalid.slice(0, 10).map((i) => `  ${invalidLine(i)}`),
        ]);
      });
    },
  );
}

export function registerDataCommands(data: Command): void {
  withJson(
    data
      .command('erase <number>')
      .description(
        "Remove a number (international) from the message store's reports; an opt-out stays, without it. Prints what remains where",
      ),
  ).action(async (number: string, flags: JsonFlag) => {
    await withStore(async (store) => {
      const erasure = await eraseNumber(store, number);
      printResult(flags, erasure, () => [
        `erased ${erasure.number} from the message store: ${erasure.store.messages} message row(s) no longer name it, ${erasure.store.rejectedEvents} rejected event(s) deleted`,
        'what remains:',
        ...erasure.remains.map((line) => `  - ${line}`),
      ]);
    });
  });
}
