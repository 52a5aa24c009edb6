/**
 * A 429 storm: the provider allows 10 requests a minute while the worker's provider queue is configured
 * for far more (a token shared with another service, or a limit lowered by the provider), and a burst
 * of sendSms workflows starts at once. Most first attempts meet 429; each must wait out Retry-After and
 * succeed, so every workflow completes with its final states (the provider's, also recorded in the message
 * store), no activity fails for good, and every recipient is charged exactly once. (campaign-429-storm runs
 * the same storm for a whole smsCampaign.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_STATUSES } from '../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { activityReport } from './support/histories.js';
import { providerStatuses, reconcileStore } from './support/message-outcomes.js';
import { printSummary } from './support/summary.js';

const PROVIDER_LIMIT_PER_MINUTE = 10;
const WORKFLOWS = 2 * PROVIDER_LIMIT_PER_MINUTE;

describe('429 storm', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    // The worker's provider queue believes in 600/min; the provider account allows 10/min.
    stack = await startTestStack({ ratePerMinute: 600 });
    await stack.admin.setRateLimit(stack.accountId!, PROVIDER_LIMIT_PER_MINUTE);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it(
    `completes a burst of ${WORKFLOWS} sendSms workflows against a ${PROVIDER_LIMIT_PER_MINUTE}/min limit without a failed activity`,
    { timeout: 600_000 },
    async () => {
      const numbers = FINAL_STATUSES.map((status) => [status, MAGIC_NUMBERS[status]] as const);
      const started = await Promise.all(
        Array.from({ length: WORKFLOWS }, (_, i) => {
          const [status, number] = numbers[i % numbers.length]!;
          return stack.msgflow
            .sendSms({ recipients: [number], sender: 'ACME', message: `storm ${i}` })
            .then((s) => ({ ...s, expected: status }));
        }),
      );
      const results = await Promise.all(started.map(async (s) => ({ ...s, outcome: await s.result() })));

      const wrong = results.filter(
        (r) =>
          r.outcome.messages.length !== 1 ||
          r.outcome.messages[0]!.status !== r.expected ||
          r.outcome.messages[0]!.source !== 'webhook',
      );
      const histories = await Promise.all(
        results.map((r) => stack.temporal.workflow.getHandle(r.workflowId).fetchHistory()),
      );
      const activities = activityReport(histories.flatMap((h) => h.events ?? []));
      const charges = (await stack.admin.ledger(stack.accountId!)).filter((e) => e.kind === 'sms');
      const chargedMessages = new Set(charges.map((c) => c.reference));
      const sentMessages = new Set(results.map((r) => r.outcome.messages[0]?.provider_message_id));
      const rateLimitedRetries = activities.retriesByCause.ProviderRateLimited ?? 0;
      const stored = await reconcileStore(stack.store, await providerStatuses(stack.messaging));

      printSummary('429 storm', {
        workflows: WORKFLOWS,
        providerLimitPerMinute: PROVIDER_LIMIT_PER_MINUTE,
        faults: rateLimitedRetries,
        activities: activities.scheduled,
        failedActivities: activities.failed,
        lost: wrong.length + stored.lost + [...sentMessages].filter((id) => !chargedMessages.has(id!)).length,
        duplicates: charges.length - chargedMessages.size + (chargedMessages.size - sentMessages.size),
      });

      expect(wrong).toEqual([]);
      expect(stored).toEqual({ checked: WORKFLOWS, lost: 0, wrong: 0, duplicates: 0 });
      expect(activities.failed).toBe(0);
      // One charge per message, for exactly the messages the workflows report.
      expect(charges).toHaveLength(WORKFLOWS);
      expect(chargedMessages).toEqual(sentMessages);
      // The storm happened: at least the requests beyond one minute's budget were refused and retried.
      expect(rateLimitedRetries).toBeGreaterThanOrEqual(WORKFLOWS - PROVIDER_LIMIT_PER_MINUTE);
      expect(Object.keys(activities.retriesByCause).filter((cause) => cause !== 'ProviderRateLimited')).toEqual([]);
    },
  );
});
