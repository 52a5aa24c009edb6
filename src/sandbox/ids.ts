/** Record identifiers: a short type prefix and 96 random bits, so ids reveal neither order nor volume. */
import { randomBytes } from 'node:crypto';

export type IdPrefix = 'acct' | 'tok' | 'cmp' | 'msg' | 'call' | 'lkp' | 'otp' | 'wh' | 'evt';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
