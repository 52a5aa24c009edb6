/**
 * Structured JSON logs (one object per line on stderr) with redaction: secrets are always removed and
 * personal data (numbers, texts) is masked unless MSGFLOW_LOG_PERSONAL_DATA=true. Which keys hold secrets
 * and which personal data: src/redaction.ts.
 */
import { keyKind } from './redaction.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function redact(value: unknown, showPersonalData = false, key?: string): unknown {
  const kind = keyKind(key);
  if (kind === 'secret') return '[redacted]';
  if (!showPersonalData && kind !== undefined) return '[personal]';
  if (Array.isArray(value)) return value.map((v) => redact(v, showPersonalData));
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, showPersonalData, k)]));
  }
  return value;
}

export function createLogger(
  component: string,
  {
    level = (process.env.MSGFLOW_LOG_LEVEL as LogLevel | undefined) ?? 'info',
    showPersonalData = process.env.MSGFLOW_LOG_PERSONAL_DATA === 'true',
    write = (line: string) => process.stderr.write(`${line}\n`),
  }: { level?: LogLevel; showPersonalData?: boolean; write?: (line: string) => void } = {},
): Logger {
  const threshold = LEVELS[level] ?? LEVELS.info;
  const log =
    (lvl: LogLevel) =>
    (message: string, fields: LogFields = {}) => {
      if (LEVELS[lvl] < threshold) return;
      const entry = {
        time: new Date().toISOString(),
        level: lvl,
        component,
        message,
        ...(redact(fields, showPersonalData) as LogFields),
      };
      write(JSON.stringify(entry));
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A logger that drops everything (tests, embedded use). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
