/**
 * Teams by endpoint: the stack's worker serves the `msgflow` Nexus service on a queue per team, each endpoint
 * targets one of them, and a campaign started through a team's endpoint sends for that team (its provider
 * calls carry the team as their fairness key, the request budget's share). A caller namespace of its own calls.
 */
import { WorkflowFailedError } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { HandlerError } from 'nexus-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nexusTeamsOf } from '../../src/api/nexus-teams.js';
import { generateKey } from '../../src/crypto/keyring.js';
import { campaignWorkflowId } from '../../src/definitions/workflow-ids.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { type NexusCaller, startNexusCaller } from '../support/nexus-caller/index.js';
import { startTestStack } from '../support/stack.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const numbers = (count: number, from: number) =>
  Array.from({ length: count }, (_, i) => `23480${String(20_000_000 + from + i)}`);

describe('teams by Nexus endpoint', () => {
  let stack: RunningStack;
  let caller: NexusCaller;
  const endpoints: Record<string, string> = {};

  beforeAll(async () => {
    const taskQueue = `e2e-nexus-teams-${crypto.randomUUID()}`;
    const teams = nexusTeamsOf(taskQueue, ['default', 'clinic', 'marketing']);
    stack = await startTestStack({ taskQueue, nexus: { teams }, encryptionKey: generateKey() });
    caller = await startNexusCaller({ namespace: stack.temporal.options.namespace, taskQueue });
    endpoints.default = caller.endpoint;
    endpoints.clinic = await caller.addEndpoint(teams.clinic!);
    endpoints.marketing = await caller.addEndpoint(teams.marketing!);
  });
  afterAll(async () => {
    await caller?.close();
    await stack?.close();
  });

  /** The fairness keys of a campaign's chunk sends, as its history scheduled them. */
  async function chunkFairnessKeys(workflowId: string): Promise<string[]> {
    const events: HistoryEvent[] = (await stack.temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    return events
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a?.activityType?.name === 'sendCampaignChunk')
      .map((a) => a!.priority?.fairnessKey ?? '');
  }

  it("sends a campaign started through a team's endpoint for that team", async () => {
    const started = await Promise.all(
      (['clinic', 'marketing', 'default'] as const).map(async (team, i) => {
        const key = `nexus-team-${team}-${crypto.randomUUID()}`;
        const campaign = {
          sender: 'ACME',
          message: `Reminder for ${team}`,
          audience: { type: 'inline' as const, recipients: numbers(2, 10 * i) },
          chunkSize: 1,
          preflight: false,
        };
        const { result } = await caller.call('startCampaign', { key, campaign }, { endpoint: endpoints[team] });
        return { team, key, summary: result };
      }),
    );
    for (const { team, key, summary } of started) {
      expect(summary.sent).toBe(2);
      expect(await chunkFairnessKeys(campaignWorkflowId(key))).toEqual([team, team]);
    }
  });

  it("refuses a campaign naming another team than its endpoint's, naming the field", async () => {
    const failure = await caller
      .call(
        'startCampaign',
        {
          key: `nexus-team-wrong-${crypto.randomUUID()}`,
          campaign: {
            sender: 'ACME',
            message: 'hi',
            audience: { type: 'inline', recipients: numbers(1, 50) },
            team: 'marketing',
          },
        },
        { endpoint: endpoints.clinic },
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    let refusal: unknown = failure;
    while (refusal instanceof Error && !(refusal instanceof HandlerError)) refusal = refusal.cause;
    expect(refusal).toBeInstanceOf(HandlerError);
    expect((refusal as HandlerError).type).toBe('BAD_REQUEST');
    expect((refusal as HandlerError).message).toContain('team is set by the endpoint (clinic)');
  });

  it("answers a single send on a team's endpoint as on the default one", async () => {
    const { result } = await caller.call(
      'sendSms',
      { recipients: [MAGIC_NUMBERS.delivered], sender: 'ACME', message: 'Your order has shipped' },
      { endpoint: endpoints.marketing },
    );
    expect(result.messages).toMatchObject([{ status: 'delivered' }]);
  });
});
