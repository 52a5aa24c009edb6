/**
 * Property-based tests of the webhook ingress (fast-check) over real HTTP. Whatever arrives — random
 * bytes, random JSON, valid bodies with one rule broken, valid bodies whose signature does not match —
 * the ingress answers 2xx only for a valid, authentic body and then signals exactly its events; anything
 * else gets a 4xx JSON error and signals nothing; never a 5xx. The signaler is a recorder here (the
 * collaborator faked, so thousands of cases run in seconds); the last property runs against the real
 * stack and Temporal.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/api/errors.js';
import { BATCH_EVENT_TYPE, eventsOf, type MessageStatusEvent, WebhookBody } from '../../src/api/events.js';
import { generateWebhookSecret, signWebhook } from '../../src/api/signature.js';
import { type RunningIngress, startIngress } from '../../src/ingress/server.js';
import { standardWebhooksVerifier } from '../../src/ingress/verifier.js';
import type { RunningStack } from '../../src/stack.js';
import { messageWorkflowId } from '../../src/definitions/workflow-ids.js';
import { outcomeQuery } from '../../src/definitions/message-status.js';
import { startTestStack } from '../support/stack.js';
import { eventMutation, statusEvent, webhookBody } from './support/arbitraries.js';
import { printSummary } from './support/summary.js';

const RUNS = Number(process.env.MSGFLOW_PROPERTY_RUNS ?? 300);
const SECRET = generateWebhookSecret();
/** lost: a valid body whose events were not signalled; duplicates: signalled twice; signalledInvalid: for a refused body. */
const tally = { cases: 0, accepted: 0, refused4xx: 0, server5xx: 0, lost: 0, duplicates: 0, signalledInvalid: 0 };

interface Answer {
  status: number;
  body: unknown;
  signalled: Array<{ events: MessageStatusEvent[]; deliveryId: string }>;
}

afterAll(() => {
  printSummary('ingress properties', tally, `${RUNS} runs per property; MSGFLOW_PROPERTY_RUNS changes it`);
});

describe('webhook ingress under arbitrary input', () => {
  let ingress: RunningIngress;
  const signalled: Answer['signalled'] = [];

  beforeAll(async () => {
    ingress = await startIngress({
      verifier: standardWebhooksVerifier([SECRET]),
      signaler: { deliver: async (events, deliveryId) => void signalled.push({ events, deliveryId }) },
    });
  });
  afterAll(async () => {
    await ingress?.close();
  });

  /** Posts raw bytes with the given headers and reports the answer and what was signalled for it. */
  const post = async (raw: Buffer | string, headers: Record<string, string>): Promise<Answer> => {
    signalled.length = 0;
    const response = await fetch(ingress.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: raw,
    });
    const text = await response.text();
    tally.cases++;
    if (response.status >= 500) tally.server5xx++;
    else if (response.status >= 400) tally.refused4xx++;
    else tally.accepted++;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text: the assertions below then fail on it
    }
    return { status: response.status, body, signalled: [...signalled] };
  };
  const signed = (raw: Buffer | string, id = `evt_${randomUUID()}`) =>
    post(raw, signWebhook([SECRET], id, Math.floor(Date.now() / 1000), raw));

  const expectRefused = (answer: Answer, statuses: number[]) => {
    expect(statuses).toContain(answer.status);
    expect(ErrorBody.safeParse(answer.body).success, JSON.stringify(answer.body)).toBe(true);
    if (answer.signalled.length) tally.signalledInvalid++;
    expect(answer.signalled).toEqual([]);
  };

  it('refuses random bytes, correctly signed, with 400/422 and signals nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), async (bytes) => {
        expectRefused(await signed(Buffer.from(bytes)), [400, 422]);
      }),
      { numRuns: RUNS },
    );
  });

  it('accepts random JSON exactly when the contract does, signalling exactly its events', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue(),
          webhookBody.map((b) => b.body),
        ),
        async (value) => {
          const answer = await signed(JSON.stringify(value));
          const verdict = WebhookBody.safeParse(value);
          if (verdict.success) {
            expect(answer.status).toBe(200);
            expect(answer.signalled.map((s) => s.events)).toEqual([eventsOf(verdict.data)]);
          } else {
            expectRefused(answer, [422]);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('accepts every valid body, single or batch, and signals its events once under the delivery id', async () => {
    await fc.assert(
      fc.asyncProperty(webhookBody, async ({ body, events }) => {
        const id = `evt_${randomUUID()}`;
        const answer = await signed(JSON.stringify(body), id);
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({ received: events.length });
        if (answer.signalled.length === 0) tally.lost++;
        if (answer.signalled.length > 1) tally.duplicates++;
        expect(answer.signalled).toEqual([{ events, deliveryId: id }]);
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses a body with one rule broken (alone or inside a batch) with 422 naming the field', async () => {
    await fc.assert(
      fc.asyncProperty(
        statusEvent,
        eventMutation,
        fc.boolean(),
        fc.array(statusEvent, { maxLength: 5 }),
        async (event, [, mutate], inBatch, others) => {
          const broken = mutate({ ...event });
          const body = inBatch ? { type: BATCH_EVENT_TYPE, events: [...others, broken] } : broken;
          const answer = await signed(JSON.stringify(body));
          expectRefused(answer, [422]);
          expect((answer.body as ErrorBody).details?.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('refuses a valid body whose signature does not cover it (tampered body, headers or secret) with 401', async () => {
    const tamperings = fc.constantFrom(
      'body byte',
      'webhook-id',
      'timestamp',
      'other secret',
      'garbage signature',
      'stale',
    );
    await fc.assert(
      fc.asyncProperty(
        webhookBody,
        tamperings,
        fc.nat(),
        fc.string({ maxLength: 80 }),
        async ({ body }, tampering, position, garbage) => {
          const raw = Buffer.from(JSON.stringify(body));
          const now = Math.floor(Date.now() / 1000);
          const headers = signWebhook([SECRET], 'evt_original', now, raw);
          let sent: Buffer = raw;
          if (tampering === 'body byte') {
            sent = Buffer.from(raw);
            const at = position % sent.length;
            sent[at] = sent[at]! ^ 0x01;
          } else if (tampering === 'webhook-id') headers['webhook-id'] = 'evt_other';
          else if (tampering === 'timestamp') headers['webhook-timestamp'] = String(now - 1);
          else if (tampering === 'other secret')
            Object.assign(headers, signWebhook([generateWebhookSecret()], 'evt_original', now, raw));
          else if (tampering === 'garbage signature') headers['webhook-signature'] = garbage;
          else Object.assign(headers, signWebhook([SECRET], 'evt_original', now - 301, raw));
          expectRefused(await post(sent, headers), [401]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('never answers 5xx to random signature headers', async () => {
    const header = fc.option(fc.string({ maxLength: 120 }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(header, header, header, statusEvent, async (id, ts, signature, event) => {
        const headers = Object.fromEntries(
          Object.entries({ 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': signature }).filter(
            ([, v]) => v !== undefined && /^[\t\x20-\x7e]*$/.test(v),
          ),
        ) as Record<string, string>;
        expectRefused(await post(JSON.stringify(event), headers), [401]);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('webhook ingress end to end under arbitrary input', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('starts a message workflow holding the status for valid events, and none for broken ones', async () => {
    const exists = (id: string) =>
      stack.temporal.workflow
        .getHandle(messageWorkflowId(id))
        .describe()
        .then(
          () => true,
          (error: unknown) => (error instanceof WorkflowNotFoundError ? false : Promise.reject(error)),
        );
    await fc.assert(
      fc.asyncProperty(statusEvent, fc.option(eventMutation, { nil: undefined }), async (generated, mutation) => {
        const event = { ...generated, provider_message_id: `prop-${randomUUID()}` };
        const body = mutation ? mutation[1]({ ...event }) : event;
        const raw = JSON.stringify(body);
        const response = await fetch(stack.ingress.webhookUrl, {
          method: 'POST',
          headers: {
            ...signWebhook([stack.webhookSecret], `evt_${randomUUID()}`, Math.floor(Date.now() / 1000), raw),
            'content-type': 'application/json',
          },
          body: raw,
        });
        tally.cases++;
        if (mutation) {
          expect(response.status).toBe(422);
          expect(await exists(event.provider_message_id)).toBe(false);
        } else {
          expect(response.status).toBe(200);
          const handle = stack.temporal.workflow.getHandle(messageWorkflowId(event.provider_message_id));
          await expect
            .poll(() => handle.query(outcomeQuery).catch(() => null), { timeout: 30_000 })
            .toMatchObject({ status: event.status, source: 'webhook' });
        }
      }),
      { numRuns: Math.min(RUNS, 40) },
    );
  });
});
