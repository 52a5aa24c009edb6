/**
 * Opaque pagination cursors: `base64url(payload).base64url(hmac)`. The payload names the account, the list
 * and its filter, and the last `seq` seen; lists are newest first by `seq`, so a cursor means "rows older
 * than this one" and rows inserted meanwhile are neither skipped nor repeated (spec Pagination rule 4).
 * The HMAC (a secret kept in the database, so cursors survive a restart) stops clients from forging or
 * editing a cursor, and the account in it stops a cursor from working for another account.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Db, persistentSetting } from './db.js';
import { ApiError } from './http/errors.js';

interface CursorPayload {
  /** account id */
  a: string;
  /** list name and filter, e.g. "messages?status=delivered" */
  l: string;
  /** last seq returned */
  s: number;
}

export class CursorCodec {
  private readonly key: Buffer;

  constructor(db: Db) {
    this.key = Buffer.from(
      persistentSetting(db, 'cursor_secret', () => randomBytes(32).toString('base64')),
      'base64',
    );
  }

  encode(accountId: string, list: string, lastSeq: number): string {
    const payload = Buffer.from(JSON.stringify({ a: accountId, l: list, s: lastSeq } satisfies CursorPayload)).toString(
      'base64url',
    );
    return `${payload}.${this.sign(payload).toString('base64url')}`;
  }

  /** The seq to continue below; 400 invalid_cursor for anything not issued by us for this account and list. */
  decode(cursor: string, accountId: string, list: string): number {
    const [payload, signature, ...rest] = cursor.split('.');
    const invalid = () =>
      new ApiError(
        'invalid_cursor',
        'The cursor is not valid here; pass next_cursor back unchanged, with the same filters',
      );
    if (!payload || !signature || rest.length > 0) throw invalid();
    const expected = this.sign(payload);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    let parsed: CursorPayload;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorPayload;
    } catch {
      throw invalid();
    }
    if (parsed.a !== accountId || parsed.l !== list || !Number.isSafeInteger(parsed.s)) throw invalid();
    return parsed.s;
  }

  private sign(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest();
  }
}
