/**
 * The console's sign-in form over real HTTP, from several loopback source addresses: after five wrong admin
 * tokens an address is answered 429 with Retry-After (its token unchecked) until its window ends, while the
 * right token from another address still signs in.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_MAX_FAILURES, SIGN_IN_WINDOW_MS } from '../../src/sandbox/console/sign-in-throttle.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('console sign-in throttle', () => {
  let t: TestSandbox;
  let clock = Date.parse('2026-11-27T10:00:00Z');

  /** One request from `from` (a loopback address of its own), with a cookie when given. */
  const call = (from: string, method: string, path: string, cookie?: string, form?: Record<string, string>) =>
    new Promise<Answer>((done, fail) => {
      const url = new URL(path, t.sandbox.url);
      const body = form ? new URLSearchParams(form).toString() : undefined;
      const req = request(
        url,
        {
          method,
          localAddress: from,
          headers: {
            ...(cookie ? { cookie } : {}),
            ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        },
      );
      req.on('error', fail);
      req.end(body);
    });

  /** Opens the sign-in form from `from`, then posts `token` with the form's session and CSRF token. */
  async function signIn(from: string, token: string): Promise<Answer> {
    const page = await call(from, 'GET', '/dashboard/sign-in');
    const cookie = String(page.headers['set-cookie']).split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    return call(from, 'POST', '/dashboard/sign-in', cookie, { _csrf: csrf, admin_token: token, next: '/dashboard' });
  }

  beforeAll(async () => {
    t = await startTestSandbox({ now: () => clock });
  });
  afterAll(async () => {
    await t?.sandbox.close();
  });

  it('answers 429 with Retry-After after five wrong tokens from one address, and only to that address', async () => {
    const guesser = '127.0.0.2';
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) {
      const wrong = await signIn(guesser, `wrong-token-${i}-0123456789`);
      expect(wrong.status).toBe(401);
      expect(wrong.body).toContain('That is not the admin token.');
    }
    // Now even the right token is not checked from there.
    const held = await signIn(guesser, t.sandbox.adminToken);
    expect(held.status).toBe(429);
    expect(Number(held.headers['retry-after'])).toBe(SIGN_IN_WINDOW_MS / 1000);
    expect(held.body).toContain('Too many wrong admin tokens from your address');

    // The admin, elsewhere, is not locked out.
    const admin = await signIn('127.0.0.3', t.sandbox.adminToken);
    expect(admin.status).toBe(303);
    expect(admin.headers.location).toBe('/dashboard');

    // Once the window has passed, the guesser's address may try again.
    clock += SIGN_IN_WINDOW_MS - 60_000;
    expect(Number((await signIn(guesser, t.sandbox.adminToken)).headers['retry-after'])).toBe(60);
    clock += 60_000;
    expect((await signIn(guesser, t.sandbox.adminToken)).status).toBe(303);
  });

  it('forgets an address’s failures once it signs in', async () => {
    const from = '127.0.0.4';
    for (let i = 0; i < SIGN_IN_MAX_FAILURES - 1; i++)
      expect((await signIn(from, 'not-the-admin-token-x')).status).toBe(401);
    expect((await signIn(from, t.sandbox.adminToken)).status).toBe(303);
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++)
      expect((await signIn(from, 'not-the-admin-token-x')).status).toBe(401);
    expect((await signIn(from, 'not-the-admin-token-x')).status).toBe(429);
  });
});
