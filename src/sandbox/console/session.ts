/**
 * Console sessions and one-time sign-in codes, kept in memory (a restart signs everyone out, which suits a
 * development tool). A session is created before sign-in so the sign-in form has a CSRF token too; signing
 * in replaces it with a new id (no session fixation). Cookie: HttpOnly, SameSite=Strict, Path=/dashboard.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { CONSOLE_BASE } from './base.js';

export const COOKIE_NAME = 'msgflow_console';
const IDLE_MS = 12 * 60 * 60 * 1000;
const CODE_TTL_MS = 10 * 60 * 1000;

export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

export interface Session {
  id: string;
  csrf: string;
  signedIn: boolean;
  expiresAt: number;
  flash?: Flash | undefined;
}

function token(): string {
  return randomBytes(24).toString('base64url');
}

/** Constant-time string comparison (through digests, so lengths may differ). */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

export class Sessions {
  private readonly byId = new Map<string, Session>();

  constructor(
    private readonly now: () => number,
    private readonly basePath: string,
  ) {}

  /** The request's live session, if its cookie names one. */
  find(req: Request): Session | undefined {
    const id = cookieOf(req, COOKIE_NAME);
    const session = id ? this.byId.get(id) : undefined;
    if (!session) return undefined;
    if (session.expiresAt <= this.now()) {
      this.byId.delete(session.id);
      return undefined;
    }
    session.expiresAt = this.now() + IDLE_MS;
    return session;
  }

  /** The request's session, or a new signed-out one (with its cookie set on `res`). */
  ensure(req: Request, res: Response): Session {
    return this.find(req) ?? this.create(res, false);
  }

  /** A fresh signed-in session replacing `previous`. */
  signIn(res: Response, previous: Session | undefined): Session {
    if (previous) this.byId.delete(previous.id);
    // A signed-out session created by this same request is replaced: one cookie in the answer, not two.
    res.removeHeader('Set-Cookie');
    return this.create(res, true);
  }

  signOut(res: Response, session: Session): void {
    this.byId.delete(session.id);
    res.append('Set-Cookie', `${COOKIE_NAME}=; Path=${this.basePath}; HttpOnly; SameSite=Strict; Max-Age=0`);
  }

  private create(res: Response, signedIn: boolean): Session {
    this.prune();
    const session: Session = { id: token(), csrf: token(), signedIn, expiresAt: this.now() + IDLE_MS };
    this.byId.set(session.id, session);
    const secure = res.req.secure ? '; Secure' : '';
    res.append('Set-Cookie', `${COOKIE_NAME}=${session.id}; Path=${this.basePath}; HttpOnly; SameSite=Strict${secure}`);
    return session;
  }

  private prune(): void {
    const now = this.now();
    for (const [id, session] of this.byId) if (session.expiresAt <= now) this.byId.delete(id);
  }
}

/**
 * Single-use sign-in codes for links such as the one `msgflow dev` prints: the admin token never travels in
 * a URL. Only a hash of each code is kept; a code works once, within ten minutes.
 */
export class SignInCodes {
  private readonly expiresByHash = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  issue(): string {
    const code = token();
    const now = this.now();
    for (const [hash, expiresAt] of this.expiresByHash) if (expiresAt <= now) this.expiresByHash.delete(hash);
    this.expiresByHash.set(hashOf(code), now + CODE_TTL_MS);
    return code;
  }

  /** True once per issued, unexpired code; the code is spent either way. */
  redeem(code: string): boolean {
    const hash = hashOf(code);
    const expiresAt = this.expiresByHash.get(hash);
    this.expiresByHash.delete(hash);
    return expiresAt !== undefined && expiresAt > this.now();
  }
}

function hashOf(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** The console URL that redeems a fresh one-time code (see the sign-in page). */
export function signInLink(sandboxUrl: string, codes: SignInCodes): string {
  return `${sandboxUrl}${CONSOLE_BASE}/sign-in/link?code=${codes.issue()}`;
}
