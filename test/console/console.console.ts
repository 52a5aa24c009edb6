/**
 * The sandbox's web console in a real headless Chromium, against the whole stack (sandbox over HTTP, a
 * worker, the test run's Temporal dev server): sign-in, API keys, webhook endpoints and deliveries, the
 * inbox, CSRF, secrets kept out of pages, live updates, and an axe-core check of every page.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import {
  launchChromium,
  newContext,
  screenshot,
  seriousViolations,
  signIn,
  type ScriptedReceiver,
  startScriptedReceiver,
} from './support.js';

const LIVE_WAIT = { timeout: 20_000 };

/** The pages whose screenshots illustrate docs/console.md. */
const SCREENSHOTS = new Set(['overview', 'messages', 'message', 'delivery', 'keys', 'webhooks', 'inbox', 'testing']);

/** Text content with runs of white space as one space. */
const squash = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim();

describe('sandbox web console', () => {
  let stack: RunningStack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: ScriptedReceiver;
  let consoleUrl: string;
  let accountUrl: string;
  let sendingToken: string;
  let messageId: string;
  let failedDeliveryId: string;
  /** Every secret the console showed once: none may appear in a page afterwards. */
  const shownSecrets: string[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ sandbox: { otpPerIpPerMinute: 10_000 } });
    consoleUrl = stack.sandbox.consoleUrl;
    browser = await launchChromium();
    context = await newContext(browser);
    page = await context.newPage();
    receiver = await startScriptedReceiver();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await stack?.close();
  });

  async function sendSms(to: string, token = sendingToken): Promise<Response> {
    return fetch(`${stack.sandbox.baseUrl}/sms/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipients: [to], sender: 'ACME', message: 'Hello from the console test' }),
    });
  }

  async function sentMessageId(to: string): Promise<string> {
    const response = await sendSms(to);
    expect(response.status).toBe(202);
    const body = (await response.json()) as { data: { messages: { provider_message_id: string }[] } };
    return body.data.messages[0]!.provider_message_id;
  }

  /** Creates an API key in the console and returns the secret shown once. */
  async function createKey(name: string, scopes: string[]): Promise<string> {
    await page.goto(`${accountUrl}/keys`);
    await page.getByLabel('Name').fill(name);
    for (const scope of scopes) await page.getByLabel(scope, { exact: true }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.locator('#new-secret').textContent())!.trim();
    shownSecrets.push(secret);
    return secret;
  }

  it('sends a visitor without a session to sign-in, and back to the page after it (forms work without JavaScript)', async () => {
    const noScript = await newContext(browser, { javaScript: false });
    try {
      const visitor = await noScript.newPage();
      await visitor.goto(`${consoleUrl}/inbox?number=2348012345600`);
      expect(new URL(visitor.url()).pathname).toBe('/dashboard/sign-in');
      expect(await visitor.getByRole('heading', { level: 1 }).textContent()).toContain('Sign in');

      await visitor.getByLabel('Admin token').fill('not-the-admin-token');
      await visitor.getByRole('button', { name: 'Sign in' }).click();
      expect(await visitor.getByRole('alert').textContent()).toContain('That is not the admin token');

      await visitor.getByLabel('Admin token').fill(stack.sandbox.adminToken);
      await visitor.getByRole('button', { name: 'Sign in' }).click();
      await visitor.waitForURL(`${consoleUrl}/inbox?number=2348012345600`);
      expect(await visitor.getByRole('heading', { level: 1 }).textContent()).toBe('Inbox of +2348012345600');
    } finally {
      await noScript.close();
    }
  });

  it('signs in with a one-time link, which works only once', async () => {
    const link = stack.sandbox.consoleSignInLink();
    expect(link).not.toContain(stack.sandbox.adminToken);
    const first = await newContext(browser);
    const second = await newContext(browser);
    try {
      const a = await first.newPage();
      await a.goto(link);
      expect(a.url()).toBe(consoleUrl);
      expect(await a.getByRole('heading', { level: 1 }).textContent()).toBe('Accounts');
      const b = await second.newPage();
      await b.goto(link);
      expect(await b.getByRole('alert').textContent()).toContain('expired or was already used');
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('signs in with the admin token and creates an account with an approved sender', async () => {
    await signIn(page, consoleUrl, stack.sandbox.adminToken);
    await page.getByLabel('Name').fill('Console test account');
    await page.getByLabel('Opening balance (minor units)').fill('500000');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/dashboard\/accounts\/acct_[\w-]+$/);
    accountUrl = page.url();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Console test account');

    await page.goto(`${accountUrl}/settings`);
    await page.getByLabel('Sender id').fill('ACME');
    await page.getByRole('button', { name: 'Approve sender' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Sender ACME approved');
  });

  it('creates an API key whose secret is shown once; it works on /v1 until revoked in the console', async () => {
    const secret = await createKey('ci key', ['balance', 'reports']);
    expect(secret).toMatch(/^sk_sandbox_/);
    const balance = () => fetch(`${stack.sandbox.baseUrl}/balance`, { headers: { authorization: `Bearer ${secret}` } });
    expect((await balance()).status).toBe(200);

    await page.goto(`${accountUrl}/keys`);
    expect(await page.content()).not.toContain(secret);
    const row = page.locator('tr', { hasText: 'ci key' });
    expect(await row.textContent()).toContain(`${secret.slice(0, 15)}…`);
    expect(await row.locator('td').nth(4).textContent()).not.toContain('never'); // last used

    await page.getByRole('button', { name: 'Revoke key ci key' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Key revoked');
    expect((await balance()).status).toBe(401);
  });

  it('registers a batch endpoint; a sent SMS reaches its final state and its delivery appears with its attempts', async () => {
    sendingToken = await createKey('sender', ['sms:send', 'reports', 'webhooks']);

    await page.goto(`${accountUrl}/webhooks`);
    await page.getByLabel('URL', { exact: true }).fill(receiver.url);
    await page
      .locator('section[aria-labelledby="new-endpoint"]')
      .getByLabel(/Batch deliveries/)
      .check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    shownSecrets.push((await page.locator('#new-secret').textContent())!.trim());
    expect(squash(await page.locator('section.card', { hasText: receiver.url }).textContent())).toContain(
      'batch deliveries on',
    );

    messageId = await sentMessageId('2348012345601');
    await page.goto(`${accountUrl}/messages/${messageId}`);
    // The page refreshes itself as the message moves and the delivery is made.
    await page.locator('#message > dl.facts .status.delivered').waitFor(LIVE_WAIT);
    expect(await page.locator('ol.path').textContent()).toMatch(/queued[\s\S]*sent[\s\S]*delivered/);
    await page.locator('#message tr[data-delivery] .status.delivered').waitFor(LIVE_WAIT);
    expect(await page.locator('#message tr[data-delivery]').first().textContent()).toContain('message.status.batch');
    const attempt = page.locator('#message tr.attempt').first();
    expect(await attempt.locator('td').nth(2).textContent()).toBe('200');
    expect(await attempt.locator('td').nth(5).textContent()).toContain('ok');
  });

  it('shows the retries of a receiver answering 500, and a redelivery that succeeds once it answers 200', async () => {
    receiver.answer = { status: 500, body: 'receiver down for maintenance' };
    const id = await sentMessageId('2348012345602');
    await page.goto(`${accountUrl}/messages/${id}`);
    await page.locator('#message tr[data-delivery] .status.failed').waitFor(LIVE_WAIT);
    failedDeliveryId = (await page.locator('#message tr[data-delivery]').first().getAttribute('data-delivery'))!;
    const attempts = page.locator('#message tr.attempt');
    expect(await attempts.count()).toBe(5); // the first attempt and the 4 retries of the test timings
    for (const row of await attempts.all()) {
      expect(await row.locator('td').nth(2).textContent()).toBe('500');
      expect(await row.locator('td').nth(5).textContent()).toContain('receiver down for maintenance');
    }

    receiver.answer = { status: 200, body: 'back up' };
    await page.getByRole('button', { name: `Redeliver ${failedDeliveryId}` }).click();
    expect(await page.getByRole('status').textContent()).toContain('Queued for another attempt');
    await page.locator('#delivery dl.facts .status.delivered').waitFor(LIVE_WAIT);
    const last = page.locator('#delivery tr.attempt').last();
    expect(await last.locator('td').nth(0).textContent()).toBe('6');
    expect(await last.locator('td').nth(2).textContent()).toBe('200');
  });

  it('shows why a send was refused on the account overview', async () => {
    const refused = await fetch(`${stack.sandbox.baseUrl}/sms/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sendingToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipients: ['2348012345605'], sender: 'NOTAPPROVED', message: 'hi' }),
    });
    expect(refused.status).toBe(422);
    await page.goto(accountUrl);
    const row = page.locator('tr.refusal').first();
    expect(squash(await row.textContent())).toContain('POST /sms/send 422 sender_not_approved');
  });

  it("shows the code of an OTP sent through msgflow in that number's inbox", async () => {
    const recipient = '2348012345603';
    await stack.msgflow.sendOtp({ purpose: 'login', recipient });
    await page.goto(`${consoleUrl}/inbox?number=${recipient}`);
    const code = (await page.locator('.bubble.otp .code').first().textContent())!.trim();
    expect(code).toMatch(/^\d{4,10}$/);
    // The code on the page is the one sent: msgflow verifies it.
    expect(await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })).toMatchObject({ status: 'verified' });
  });

  it("shows the code a fallback call read out in that number's inbox, beside the undelivered text", async () => {
    const recipient = '2348012345607';
    await stack.admin.setOutcome(recipient, 'undelivered');
    await stack.msgflow.sendOtp({ purpose: 'login', recipient, channels: ['sms', 'voice'] });
    await page.goto(`${consoleUrl}/inbox?number=${recipient}`);
    // Live updates bring the call in once the text's undelivered status has reached the session.
    const call = page.locator('.bubble.voice .code');
    await call.waitFor({ timeout: 30_000 });
    const code = (await call.textContent())!.trim();
    expect((await page.locator('.bubble.otp .code').textContent())!.trim()).toBe(code);
    expect(await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })).toMatchObject({ status: 'verified' });
  });

  it('refuses a form posted without its CSRF token, or with a wrong one', async () => {
    const missing = await page.request.post(`${consoleUrl}/accounts`, { form: { name: 'posted without csrf' } });
    expect(missing.status()).toBe(403);
    expect(await missing.text()).toContain('security token is missing');
    const wrong = await page.request.post(`${consoleUrl}/accounts`, {
      form: { name: 'posted with a wrong csrf', _csrf: 'not-the-token' },
    });
    expect(wrong.status()).toBe(403);
    await page.goto(consoleUrl);
    expect(await page.content()).not.toContain('posted without csrf');
    expect(await page.content()).not.toContain('posted with a wrong csrf');
  });

  it('shows a message sent while its page is open, without a reload', async () => {
    await page.goto(`${accountUrl}/messages`);
    const deliveriesPage = await context.newPage();
    await deliveriesPage.goto(`${accountUrl}/deliveries`);
    const deliveriesBefore = await deliveriesPage.locator('tr[data-delivery]').count();
    await page.evaluate('window.__sameDocument = true');
    await deliveriesPage.evaluate('window.__sameDocument = true');

    const id = await sentMessageId('2348012345604');
    await page.locator(`tr[data-message="${id}"] .status.delivered`).waitFor(LIVE_WAIT);
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    await deliveriesPage.locator(`tr[data-delivery]:nth-child(${deliveriesBefore + 1})`).waitFor(LIVE_WAIT);
    expect(await deliveriesPage.evaluate('window.__sameDocument')).toBe(true);
    await deliveriesPage.close();
  });

  it('pages through messages with cursors and filters them by status', async () => {
    await page.goto(`${accountUrl}/messages?per_page=2`);
    const idsOn = async () =>
      Promise.all((await page.locator('tr[data-message]').all()).map((row) => row.getAttribute('data-message')));
    const first = await idsOn();
    expect(first).toHaveLength(2);
    await page.getByRole('link', { name: 'Older messages' }).click();
    const second = await idsOn();
    expect(second.length).toBeGreaterThan(0);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    await page.getByRole('link', { name: 'Newest messages' }).click();
    expect(await idsOn()).toEqual(first);

    await page.getByLabel('Status').selectOption('delivered');
    await page.getByRole('button', { name: 'Filter' }).click();
    expect(new URL(page.url()).searchParams.get('status')).toBe('delivered');
    const states = await page.locator('tr[data-message] .status').allTextContents();
    expect(states.length).toBeGreaterThan(0);
    expect(new Set(states)).toEqual(new Set(['delivered']));
  });

  it('rotates a signing secret, shown once', async () => {
    await page.goto(`${accountUrl}/webhooks`);
    await page.getByRole('button', { name: `Rotate signing secret of ${receiver.url}` }).click();
    const rotated = (await page.locator('#new-secret').textContent())!.trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(shownSecrets).not.toContain(rotated);
    shownSecrets.push(rotated);

    // The event filter is edited in place: only failures from now on.
    const endpoint = page.locator('section.card', { hasText: receiver.url });
    await endpoint.getByLabel('message.failed').check();
    await endpoint.getByRole('button', { name: 'Save endpoint' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Endpoint saved');
    expect(
      squash(await page.locator('section.card', { hasText: receiver.url }).locator('p.muted').textContent()),
    ).toContain('message.failed · batch deliveries on');
  });

  it('works from the keyboard: a skip link first, then the page, and forms submit with Enter', async () => {
    await page.goto(`${accountUrl}/wallet`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.closest("main") !== null')).toBe(true);
    await page.getByLabel('Amount in minor units').focus();
    await page.keyboard.type('250');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${accountUrl}/wallet`);
    expect(await page.getByRole('status').textContent()).toContain('Added 250 to the wallet');
  });

  /** The console's main pages, for the secrets check, the axe check and the screenshots. */
  const mainPages = (): [name: string, url: string][] => [
    ['accounts', consoleUrl],
    ['overview', accountUrl],
    ['messages', `${accountUrl}/messages`],
    ['message', `${accountUrl}/messages/${messageId}`],
    ['deliveries', `${accountUrl}/deliveries`],
    ['delivery', `${accountUrl}/deliveries/${failedDeliveryId}`],
    ['campaigns', `${accountUrl}/campaigns`],
    ['keys', `${accountUrl}/keys`],
    ['webhooks', `${accountUrl}/webhooks`],
    ['settings', `${accountUrl}/settings`],
    ['wallet', `${accountUrl}/wallet`],
    ['testing', `${accountUrl}/testing`],
    ['inbox', `${consoleUrl}/inbox?number=2348012345603`],
    ['not-found', `${consoleUrl}/no-such-page`],
  ];

  it('keeps the admin token, and every secret after its one showing, out of every page', async () => {
    expect(shownSecrets).toHaveLength(4); // two API keys, an endpoint's secret, a rotated one
    for (const [, url] of mainPages()) {
      expect(url).not.toContain(stack.sandbox.adminToken);
      await page.goto(url);
      const markup = await page.content();
      expect(markup).not.toContain(stack.sandbox.adminToken);
      for (const secret of shownSecrets) expect(markup).not.toContain(secret);
    }
  });

  it('passes axe-core on every page with no serious or critical violation (and takes the screenshots)', async () => {
    const found: { page: string; violations: unknown[] }[] = [];
    for (const [name, url] of mainPages()) {
      await page.goto(url);
      if (SCREENSHOTS.has(name)) await screenshot(page, name);
      const violations = await seriousViolations(page);
      if (violations.length > 0) found.push({ page: name, violations });
    }
    const signedOut = await newContext(browser);
    try {
      const visitor = await signedOut.newPage();
      await visitor.goto(`${consoleUrl}/sign-in`);
      const violations = await seriousViolations(visitor);
      if (violations.length > 0) found.push({ page: 'sign-in', violations });
    } finally {
      await signedOut.close();
    }
    // A page whose secret is on show (the one time) is checked too.
    await createKey('axe key', ['balance']);
    const violations = await seriousViolations(page);
    if (violations.length > 0) found.push({ page: 'keys with a new secret', violations });
    expect(found).toEqual([]);
  });
});
