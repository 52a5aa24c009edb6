/**
 * What the message store's parts share: the context each part is built from (one driver, one way of
 * sealing personal data), the row shape of `messages`, statement builders and the input checks.
 */
import { isFinalStatus } from '../api/constants.js';
import type { Driver } from './driver.js';
import type { PersonalData } from './personal-data.js';
import { type FinalOutcome, type FinalSource, type StoreHooks, type StoredFinal, StoreInputError } from './types.js';

/** What every part of the store is built from: the same driver, personal-data sealing and test hooks. */
export interface StoreContext {
  readonly driver: Driver;
  readonly personal: PersonalData;
  readonly hooks: StoreHooks;
}

/** Rows per statement: well under SQLite's 32766 and PostgreSQL's 65535 parameters. */
export const BATCH = 500;
const MAX_ID_LENGTH = 200;

export interface MessageRow {
  provider_message_id: string;
  final_status: string | null;
  final_timestamp: string | null;
  final_event_id: string | null;
  last_status: string | null;
  last_status_timestamp: string | null;
  recipient: string | null;
  campaign_key: string | null;
  first_seen_at: number;
  last_seen_at: number;
  final_recorded_at: number | null;
  /** The W3C traceparent of the span that sent it; null when it was not traced. */
  trace_parent: string | null;
  /** Where the final state came from (`webhook` or `provider`); null while not final. */
  final_source: string | null;
}

/** The row's final outcome, as a list of none or one (for `flatMap`). */
export function outcomeOf(
  row: Pick<MessageRow, 'provider_message_id' | 'final_status' | 'final_timestamp' | 'final_event_id'> &
    Partial<Pick<MessageRow, 'final_source'>>,
): FinalOutcome[] {
  if (row.final_status === null || !isFinalStatus(row.final_status)) return [];
  return [
    {
      providerMessageId: row.provider_message_id,
      status: row.final_status,
      timestamp: row.final_timestamp!,
      eventId: row.final_event_id,
      ...(row.final_source === 'provider' ? { source: 'provider' as const } : {}),
    },
  ];
}

/** The row's final state, a message's or a voice call's, with where it came from; null while not final. */
export function storedFinalOf(
  row: Pick<MessageRow, 'provider_message_id' | 'final_status' | 'final_timestamp' | 'final_event_id' | 'final_source'>,
): StoredFinal | null {
  if (row.final_status === null) return null;
  return {
    providerMessageId: row.provider_message_id,
    status: row.final_status,
    timestamp: row.final_timestamp!,
    eventId: row.final_event_id,
    source: sourceOf(row.final_source),
  };
}

/** Final states recorded before the column existed came from webhooks (migration 10 says so too). */
export function sourceOf(column: string | null): FinalSource {
  return column === 'provider' ? 'provider' : 'webhook';
}

/**
 * The rule of final states in an upsert's `ON CONFLICT … DO UPDATE SET`: the first final state recorded for a
 * message stands, so its status and these columns of it change only while the message has none.
 */
export function firstFinalStands(columns: readonly string[]): string {
  return [
    'final_status = COALESCE(messages.final_status, excluded.final_status)',
    ...columns.map((c) => `${c} = CASE WHEN messages.final_status IS NULL THEN excluded.${c} ELSE messages.${c} END`),
  ].join(',\n');
}

/**
 * A waiter still waiting: its message has no final state yet (none untold, none told) and it was not released.
 * The same condition as the partial index waiters_pending_by_workflow (migration 12), which makes it a lookup.
 */
export function isPending(waiter: string): string {
  return `${waiter}.untold_since IS NULL AND ${waiter}.told_at IS NULL AND ${waiter}.released_at IS NULL`;
}

export function rows(count: number, columns: number): string {
  const row = `(${list(columns)})`;
  return Array.from({ length: count }, () => row).join(', ');
}

export function list(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}

export function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}

/**
 * Without duplicates (one statement may not upsert a row twice), in id order: transactions that lock several
 * rows lock them in the same order, so they never wait for each other in a cycle.
 */
export function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()].sort((a, b) => compare(key(a), key(b)));
}

export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function encodeCursor(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  if (!/^[\w-]{1,400}$/.test(cursor)) throw new StoreInputError('invalid cursor');
  return Buffer.from(cursor, 'base64url').toString('utf8');
}

export function checkText(name: string, value: unknown, max: number): asserts value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw new StoreInputError(`${name} must be a string of 1 to ${max} characters`);
}

export function checkId(id: unknown): asserts id is string {
  checkText('providerMessageId', id, MAX_ID_LENGTH);
}

export function checkNumber(number: unknown): asserts number is string {
  if (typeof number !== 'string' || !/^\+[1-9]\d{6,14}$/.test(number))
    throw new StoreInputError('a number must be in international format with a leading +, e.g. +2348012345678');
}

export function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new StoreInputError('limit must be an integer from 1 to 1000');
}
