/** Bearer-token authentication (spec Authentication 1–3) and the IP allowlist (IP allowlist 1–3). */
import type { Request } from 'express';
import type { Scope } from '../../api/scopes.js';
import { type AccountRow, findToken, getAccount, ipAllowed, type TokenRow } from '../accounts.js';
import type { Db } from '../db.js';
import { ApiError } from './errors.js';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

export function bearerToken(req: Request): string | undefined {
  return BEARER.exec(req.get('authorization') ?? '')?.[1];
}

export function authenticate(db: Db, req: Request): { token: TokenRow; account: AccountRow } {
  const header = req.get('authorization');
  const challenge = { 'WWW-Authenticate': 'Bearer realm="v1"' };
  if (!header)
    throw new ApiError('unauthorized', 'Send the header Authorization: Bearer <API_TOKEN>', undefined, challenge);
  const secret = bearerToken(req);
  const token = secret ? findToken(db, secret) : undefined;
  const account = token && getAccount(db, token.account_id);
  if (!token || !account)
    throw new ApiError('unauthorized', 'The API token is invalid or has been revoked', undefined, challenge);
  return { token, account };
}

/** `req.ip` is the socket address unless Express `trust proxy` lets X-Forwarded-For speak for it. */
export function assertIpAllowed(db: Db, account: AccountRow, req: Request): void {
  if (!ipAllowed(db, account.id, req.ip ?? req.socket.remoteAddress)) {
    throw new ApiError('ip_not_allowed', 'Requests from this IP address are not allowed for this account');
  }
}

export function assertScope(token: TokenRow, scope: Scope): void {
  if (!token.scopes.includes(scope)) {
    throw new ApiError('insufficient_scope', `This token lacks the scope "${scope}" this endpoint requires`);
  }
}
