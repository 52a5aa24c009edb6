/**
 * The provider's limit used in full: a personalised campaign (a CSV with a name per recipient, a `{name}`
 * template, so every text is distinct and every request carries one) at the sandbox's real 120
 * requests/minute, sent by 3 `msgflow worker` processes sharing the provider queue's server-enforced rate.
 * Asserted: no request met a 429 (no attempt of any provider activity was retried for ProviderRateLimited),
 * each recipient got their own text (the sandbox's inbox), was charged once, and every state was counted
 * exactly (campaign result, provider, message store). Printed, not asserted (timing on a shared machine): the
 * achieved request rate as a fraction of the limit, from the provider's own message times.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { auditCampaign, campaignAudience, eventsOfAllRuns } from './support/campaign-audit.js';
import { activityReport } from './support/histories.js';
import { printSummary } from './support/summary.js';

const LIMIT_PER_MINUTE = 120;
const WORKERS = 3;
/** 600 distinct texts, one request each: five minutes at the limit. */
const RECIPIENTS = Number(process.env.MSGFLOW_RELIABILITY_FULL_RATE_RECIPIENTS ?? 600);
const TEMPLATE = 'Hi {name}, your appointment at the Lekki clinic is tomorrow at 10:00. Reply STOP to opt out.';
const nameOf = (i: number) => `Customer ${String(i + 1).padStart(4, '0')}`;

describe('personalised campaign at the provider limit', () => {
  let stack: RunningStack;
  const workers: WorkerProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'campaign-full-rate-'));
  beforeAll(async () => {
    stack = await startTestStack({ startWorker: false, ratePerMinute: LIMIT_PER_MINUTE });
    for (let i = 0; i < WORKERS; i++)
      workers.push(startWorkerProcess(stack, { MSGFLOW_RATE_LIMIT_PER_MINUTE: String(LIMIT_PER_MINUTE) }));
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    `sends ${RECIPIENTS} distinct texts at ${LIMIT_PER_MINUTE}/min with ${WORKERS} worker processes and no 429`,
    { timeout: 900_000 },
    async () => {
      const started = Date.now();
      const audience = campaignAudience(RECIPIENTS);
      // The workers run elsewhere and read the file themselves: an absolute path.
      const file = join(dir, 'reminders.csv');
      writeFileSync(file, ['name,phone', ...audience.map((number, i) => `${nameOf(i)},${number}`), ''].join('\n'));
      const run = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: TEMPLATE,
        audience: { type: 'file', path: file },
      });
      const result = await run.result();
      const audit = await auditCampaign(stack, audience, result, run.workflowId);
      const activities = activityReport(await eventsOfAllRuns(stack.temporal, run.workflowId, result.runs));
      const rateLimited = activities.retriesByCause.ProviderRateLimited ?? 0;
      const sendTimes = (await sendRequestTimes(stack)).sort((a, b) => a - b);
      const texts = await textsReceived(stack, audience);
      const perMinute = (60_000 * (sendTimes.length - 1)) / (sendTimes.at(-1)! - sendTimes[0]!);
      const gaps = sendTimes.slice(1).map((t, i) => t - sendTimes[i]!);
      printSummary(
        'personalised campaign at the provider limit',
        {
          recipients: RECIPIENTS,
          distinctTexts: new Set(texts.values()).size,
          requests: sendTimes.length,
          workers: WORKERS,
          limitPerMinute: LIMIT_PER_MINUTE,
          achievedPerMinute: Math.round(perMinute * 10) / 10,
          ofLimit: `${Math.round((1000 * perMinute) / LIMIT_PER_MINUTE) / 10}%`,
          // Where the rest went: the longest pauses between two requests (continue-as-new, slow workflow turns).
          longestGapsS: [...gaps]
            .sort((a, b) => b - a)
            .slice(0, 3)
            .map((g) => (g / 1000).toFixed(1))
            .join('/'),
          rateLimited,
          messages: audit.charges,
          lost: audit.lost,
          duplicates: audit.duplicates,
        },
        `${Math.round((Date.now() - started) / 1000)} s, ${result.runs} runs`,
      );

      expect(workers.every((w) => w.child.exitCode === null)).toBe(true);
      expect(rateLimited).toBe(0);
      expect(activities.failed).toBe(0);
      expect(Object.keys(activities.retriesByCause)).toEqual([]);
      expect(sendTimes).toHaveLength(RECIPIENTS);
      // Each recipient got their own text, one request each (the provider charged one message per request).
      expect(new Set(texts.values()).size).toBe(RECIPIENTS);
      audience.forEach((number, i) => expect(texts.get(number)).toBe(TEMPLATE.replace('{name}', nameOf(i))));
      expect(audit).toMatchObject({ lost: 0, duplicates: 0, wrong: 0, charges: RECIPIENTS });
      expect(result).toMatchObject({ sent: RECIPIENTS, chunks: RECIPIENTS, duplicates: 0 });
      expect(result.counts).toEqual({ delivered: RECIPIENTS - 4, undelivered: 1, failed: 1, rejected: 1, expired: 1 });
      expect(audit.sandboxCounts).toEqual(result.counts);
      expect(audit.storeCounts).toEqual(result.counts);
    },
  );
});

/** The text each number received, from the sandbox's inbox. */
async function textsReceived(stack: RunningStack, numbers: string[]): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const number of numbers) {
    const [entry, ...more] = await stack.admin.inbox(number);
    if (entry && more.length === 0) texts.set(number, entry.text);
  }
  return texts;
}

/** When the provider accepted each message (one per request here), in ms since the epoch. */
async function sendRequestTimes(stack: RunningStack): Promise<number[]> {
  const times: number[] = [];
  for await (const message of stack.messaging.messages.list({ perPage: 200 }))
    times.push(Date.parse(message.created_at));
  return times;
}
