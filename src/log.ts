/**
 * Structured logs through pino: one JSON object per line on stderr (or, with MSGFLOW_LOG_FORMAT=pretty, one
 * readable line), with redaction: secrets are always removed and personal data (numbers, texts) is masked
 * unless MSGFLOW_LOG_PERSONAL_DATA=true, by the rule the client's logging hook applies too (src/redaction.ts).
 */
import { pino } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { redact } from './redaction.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'] satisfies LogLevel[];

/** `json` (the default): one object a line, for collectors; `pretty`: one readable line, for a terminal. */
export type LogFormat = 'json' | 'pretty';

export function createLogger(
  component: string,
  {
    level = (process.env.MSGFLOW_LOG_LEVEL as LogLevel | undefined) ?? 'info',
    showPersonalData = process.env.MSGFLOW_LOG_PERSONAL_DATA === 'true',
    format = process.env.MSGFLOW_LOG_FORMAT === 'pretty' ? 'pretty' : 'json',
    write = (line: string) => process.stderr.write(`${line}\n`),
  }: { level?: LogLevel; showPersonalData?: boolean; format?: LogFormat; write?: (line: string) => void } = {},
): Logger {
  const toText = format === 'pretty' ? prettyLine() : (json: string) => json;
  const logger = pino(
    {
      level: LEVELS.includes(level) ? level : 'info',
      base: { component },
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write: (json: string) => write(toText(json).trimEnd()) },
  );
  // Redaction walks every field, so an entry below the level is dropped before it: the SDK sends its debug
  // entries (with their metadata) whatever the level.
  const log =
    (lvl: LogLevel) =>
    (message: string, fields: LogFields = {}) => {
      if (logger.isLevelEnabled(lvl)) logger[lvl](redact(fields, showPersonalData) as LogFields, message);
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** pino-pretty on one line: time, level, `component: message`, then the fields. */
function prettyLine(): (json: string) => string {
  return prettyFactory({
    messageKey: 'message',
    messageFormat: '{component}: {message}',
    ignore: 'component',
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    colorize: process.stderr.isTTY === true,
  });
}

/** A logger that drops everything (tests, embedded use). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
