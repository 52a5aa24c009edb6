/**
 * `msgflow otp guard report|backtest|rules`: the OTP fraud guard over the OTP record in the message store
 * (the one the worker writes: MSGFLOW_DATABASE_URL, or `msgflow dev`'s SQLite file, with its keys).
 */
import { type Command, Option } from 'commander';
import { formatDuration } from '../api/duration.js';
import { DEFAULT_OTP_GUARD, describeRules, type OtpBlockReason, type OtpGuardConfig } from '../api/otp-guard.js';
import { otpGuardFromEnv, readOtpGuardRules } from '../otp-guard-file.js';
import { backtest, type ChannelConversionRow, channelConversion, guardReport } from '../store/otp-guard-replay.js';
import { duration, type JsonFlag, printResult, withJson } from './common.js';
import { withStore } from './store.js';

const DEFAULT_SINCE_MS = 7 * 86_400_000;

interface SinceOptions extends JsonFlag {
  since: number;
}

export function registerOtpGuardCommands(otp: Command): void {
  const guard = otp
    .command('guard')
    .description('The OTP fraud guard: its rules, what it saw, what other rules would do');
  const since = (command: Command) =>
    command.addOption(
      new Option('--since <duration>', 'how far back to read the OTP record')
        .argParser(duration)
        .default(DEFAULT_SINCE_MS, formatDuration(DEFAULT_SINCE_MS)), // help shows "7d", not the milliseconds
    );

  withJson(guard.command('rules'))
    .description("The rules the worker's guard applies (MSGFLOW_OTP_GUARD_RULES, else the defaults)")
    .action((options: JsonFlag) => {
      const config = otpGuardFromEnv();
      if (!config) {
        printResult(options, null, () => 'off (MSGFLOW_OTP_GUARD_RULES=off): no guard, no OTP record');
        return;
      }
      printResult(options, config, () => [
        ...describeRules(config.rules),
        ...Object.entries(config.purposes).flatMap(([purpose, rules]) => [
          `purpose ${purpose}:`,
          ...describeRules(rules).map((line) => `  ${line}`),
        ]),
      ]);
    });

  withJson(since(guard.command('report')))
    .description(
      'Sends, verifications and blocks per country and prefix (prefixes cut as the current rules cut them), or conversion per channel',
    )
    .option('--limit <rows>', 'rows to print, busiest first', (v) => Number.parseInt(v, 10), 50)
    .addOption(
      new Option(
        '--by <grouping>',
        'place: per country and prefix; channel: texts and calls, with how many reached the person',
      )
        .choices(['place', 'channel'])
        .default('place'),
    )
    .action(async (options: SinceOptions & { limit: number; by: 'place' | 'channel' }) => {
      const config = otpGuardFromEnv() ?? DEFAULT_OTP_GUARD;
      const history = await withStore((store) => store.otp.history(Date.now() - options.since));
      if (options.by === 'channel') {
        printChannels(options, channelConversion(history));
        return;
      }
      const rows = guardReport(config, history);
      const shown = rows.slice(0, options.limit);
      printResult(options, shown, () =>
        shown.length === 0
          ? 'no OTP sends recorded in that time'
          : [
              'country  prefix           attempts  sent  sessions  verified  conversion  blocked',
              ...shown.map(
                (r) =>
                  `${r.country.padEnd(7)}  ${r.prefix.padEnd(15)}  ${String(r.attempts).padStart(8)}  ${String(r.sent).padStart(4)}  ${String(r.sessions).padStart(8)}  ${String(r.verifiedSessions).padStart(8)}  ${rate(r.verifiedSessions, r.sessions).padStart(10)}  ${byReason(r.blocked)}${Object.keys(r.flagged).length ? `  flagged ${byReason(r.flagged)}` : ''}`,
              ),
            ],
      );
    });

  withJson(since(guard.command('backtest')))
    .description(
      'Replay the recorded OTP sends against candidate rules: what they would have blocked, and at what cost',
    )
    .requiredOption('--rules <file>', 'the candidate rules (YAML or JSON, as MSGFLOW_OTP_GUARD_RULES)')
    .action(async (options: SinceOptions & { rules: string }) => {
      const candidate: OtpGuardConfig = readOtpGuardRules(options.rules);
      const result = await withStore(async (store) =>
        backtest(candidate, await store.otp.history(Date.now() - options.since)),
      );
      const { decisions, ...summary } = result;
      const blocked = sum(result.wouldBlock);
      printResult(options, { ...summary, decisions: decisions.size }, () => [
        `sends replayed: ${result.sends}`,
        `would block: ${blocked} (${rate(blocked, result.sends)})  ${byReason(result.wouldBlock)}`,
        ...(sum(result.wouldFlag)
          ? [`would flag (monitor): ${sum(result.wouldFlag)}  ${byReason(result.wouldFlag)}`]
          : []),
        `verified sessions among those blocked (logins it would have cost): ${result.verifiedSessionsBlocked}`,
        `cost saved: ${
          Object.entries(result.costSaved)
            .map(([currency, minor]) => `${minor} ${currency} (minor units)`)
            .join(', ') || 'none'
        }`,
        `sends the live guard blocked that these rules would let through: ${result.liveBlockedWouldSend}`,
      ]);
    });
}

function printChannels(options: JsonFlag, rows: ChannelConversionRow[]): void {
  printResult(options, rows, () =>
    rows.length === 0
      ? 'no OTP sends recorded in that time'
      : [
          'channel  sent  reached  sessions  verified  conversion',
          ...rows.map(
            (r) =>
              `${r.channel.padEnd(7)}  ${String(r.sent).padStart(4)}  ${String(r.reached).padStart(7)}  ${String(r.sessions).padStart(8)}  ${String(r.verifiedSessions).padStart(8)}  ${rate(r.verifiedSessions, r.sessions).padStart(10)}`,
          ),
        ],
  );
}

function sum(counts: Partial<Record<OtpBlockReason, number>>): number {
  return Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
}

function byReason(counts: Partial<Record<OtpBlockReason, number>>): string {
  return (
    Object.entries(counts)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', ') || '-'
  );
}

function rate(part: number, whole: number): string {
  return whole === 0 ? '-' : `${Math.round((part / whole) * 100)}%`;
}
