/**
 * The console suite's parts: Debian's chromium driven by playwright-core, sign-in, an axe-core check run
 * in the page, screenshots, and a webhook receiver whose answer (status and body) the test sets.
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axe from 'axe-core';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { CHROMIUM } from './chromium-setup.js';

export async function launchChromium(): Promise<Browser> {
  const rootArgs = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
  return chromium.launch({ executablePath: CHROMIUM, args: [...rootArgs, '--disable-dev-shm-usage'] });
}

/**
 * A context of its own (cookies apart). bypassCSP lets the test inject axe-core; the console's own pages
 * never need it (their script is a same-origin file).
 */
export function newContext(browser: Browser, options: { javaScript?: boolean } = {}): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width: 1280, height: 800 },
    bypassCSP: true,
    javaScriptEnabled: options.javaScript ?? true,
  });
}

/** Signs in through the form, as a person would: the token typed into the password field. */
export async function signIn(page: Page, consoleUrl: string, adminToken: string): Promise<void> {
  await page.goto(`${consoleUrl}/sign-in`);
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${consoleUrl}`);
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's WCAG 2.x A/AA rules on the current page; only serious and critical violations are returned. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: axe.source });
  const result = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, resultTypes: ['violations'] })`,
  )) as { violations: AxeViolation[] };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
}

/** Where screenshots go: docs/console with MSGFLOW_CONSOLE_SCREENSHOTS=docs/console, else a temporary folder. */
export const SCREENSHOT_DIR = process.env.MSGFLOW_CONSOLE_SCREENSHOTS ?? join(tmpdir(), 'msgflow-console-screenshots');

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`) });
}

export interface ScriptedReceiver {
  url: string;
  received: number;
  /** What the next deliveries are answered with. */
  answer: { status: number; body: string };
  close(): Promise<void>;
}

export async function startScriptedReceiver(): Promise<ScriptedReceiver> {
  const receiver: ScriptedReceiver = {
    url: '',
    received: 0,
    answer: { status: 200, body: 'ok' },
    close: async () => {},
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receiver.received += 1;
      res.writeHead(receiver.answer.status, { 'content-type': 'text/plain' }).end(receiver.answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
