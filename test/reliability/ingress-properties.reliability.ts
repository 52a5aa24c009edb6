/**
 * Property-based tests of the webhook ingress (fast-check) over real HTTP. Whatever arrives — random
 * bytes, random JSON, valid bodies with one rule broken, valid bodies whose signature does not match —
 * the ingress never answers 5xx. An authentic body is answered 200: its valid events go to the outcome
 * router exactly once, under the delivery id; each invalid one is kept as a rejected event and named in the
 * answer (`rejected: [{index, reason}]`), never routed. A body that is not authentic gets 401 and nothing
 * is routed or kept. The router and the rejected-event store are recorders here (the collaborators faked,
 * so thousands of cases run in seconds); the last property runs against the real stack: the message store
 * and a waiting workflow.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/api/errors.js';
import { BATCH_EVENT_TYPE, type MessageStatusEvent, MessageStatusEvent as EventSchema } from '../../src/api/events.js';
import { generateWebhookSecret, signWebhook } from '../../src/api/signature.js';
import { type RunningIngress, startIngress } from '../../src/ingress/server.js';
import { standardWebhooksVerifier } from '../../src/ingress/verifier.js';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';
import { eventMutation, statusEvent, webhookBody } from './support/arbitraries.js';
import { printSummary } from './support/summary.js';

const RUNS = Number(process.env.MSGFLOW_PROPERTY_RUNS ?? 300);
const SECRET = generateWebhookSecret();
/**
 * lost: a valid event not routed; duplicates: routed twice; routedInvalid: an invalid event routed, or
 * anything routed for an unauthentic body; unkept: an invalid event neither kept nor named in the answer.
 */
const tally = {
  cases: 0,
  accepted: 0,
  rejectedEvents: 0,
  refused4xx: 0,
  server5xx: 0,
  lost: 0,
  duplicates: 0,
  routedInvalid: 0,
  unkept: 0,
};

interface Answer {
  status: number;
  body: unknown;
  routed: Array<{ events: MessageStatusEvent[]; deliveryId: string }>;
  kept: Array<{ reason: string; event: unknown }>;
}

interface Accepted {
  received: number;
  rejected: Array<{ index: number; reason: string }>;
}

afterAll(() => {
  printSummary('ingress properties', tally, `${RUNS} runs per property; MSGFLOW_PROPERTY_RUNS changes it`);
});

/** The contract, stated on its own: a batch's events are judged one by one; any other body is one event. */
function expectedVerdict(value: unknown): {
  valid: MessageStatusEvent[];
  invalid: Array<{ index: number; event: unknown }>;
} {
  const isBatch =
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (value as Record<string, unknown>).type === BATCH_EVENT_TYPE &&
    Array.isArray((value as Record<string, unknown>).events);
  const candidates: unknown[] = isBatch ? ((value as { events: unknown[] }).events ?? []) : [value];
  const valid: MessageStatusEvent[] = [];
  const invalid: Array<{ index: number; event: unknown }> = [];
  candidates.forEach((candidate, index) => {
    const parsed = EventSchema.safeParse(candidate);
    if (parsed.success) valid.push(parsed.data);
    else invalid.push({ index, event: candidate });
  });
  return { valid, invalid };
}

describe('webhook ingress under arbitrary input', () => {
  let ingress: RunningIngress;
  const routed: Answer['routed'] = [];
  const kept: Answer['kept'] = [];

  beforeAll(async () => {
    ingress = await startIngress({
      verifier: standardWebhooksVerifier([SECRET]),
      router: {
        deliver: async (events, deliveryId, rejected = []) => {
          for (const { reason, event } of rejected) kept.push({ reason, event });
          routed.push({ events, deliveryId });
        },
      },
    });
  });
  afterAll(async () => {
    await ingress?.close();
  });

  /** Posts raw bytes with the given headers and reports the answer and what was routed and kept for it. */
  const post = async (raw: Buffer | string, headers: Record<string, string>): Promise<Answer> => {
    routed.length = 0;
    kept.length = 0;
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
    return { status: response.status, body, routed: routed.splice(0), kept: kept.splice(0) };
  };
  const signed = (raw: Buffer | string, id = `evt_${randomUUID()}`) =>
    post(raw, signWebhook([SECRET], id, Math.floor(Date.now() / 1000), raw));
  const routedEvents = (answer: Answer) => answer.routed.flatMap((r) => r.events);

  const expectRefused = (answer: Answer, statuses: number[]) => {
    expect(statuses).toContain(answer.status);
    expect(ErrorBody.safeParse(answer.body).success, JSON.stringify(answer.body)).toBe(true);
    if (routedEvents(answer).length) tally.routedInvalid++;
    expect(routedEvents(answer)).toEqual([]);
    expect(answer.kept).toEqual([]);
  };

  /** An authentic body: 200, exactly its valid events routed once, each invalid one kept and named. */
  const expectJudged = (answer: Answer, value: unknown, deliveryId?: string) => {
    const { valid, invalid } = expectedVerdict(value);
    expect(answer.status).toBe(200);
    const body = answer.body as Accepted;
    expect(body.received).toBe(valid.length);
    expect(body.rejected.map((r) => r.index)).toEqual(invalid.map((r) => r.index));
    for (const r of body.rejected) expect(r.reason.length).toBeGreaterThan(0);
    tally.rejectedEvents += body.rejected.length;
    if (answer.kept.length < invalid.length || body.rejected.length < invalid.length) tally.unkept++;
    expect(answer.kept.map((k) => k.event)).toEqual(invalid.map((r) => r.event));
    const events = routedEvents(answer);
    if (events.length < valid.length) tally.lost++;
    if (events.length > valid.length) tally.duplicates++;
    expect(events).toEqual(valid);
    // One routing per delivery, under its id (an empty one is harmless: nothing to record).
    expect(answer.routed.length).toBeLessThanOrEqual(1);
    if (deliveryId) for (const r of answer.routed) expect(r.deliveryId).toBe(deliveryId);
  };

  it('keeps random bytes, correctly signed, as one rejected event and routes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), async (bytes) => {
        const answer = await signed(Buffer.from(bytes));
        expect(answer.status).toBe(200);
        expect(answer.body).toMatchObject({ received: 0, rejected: [{ index: 0 }] });
        expect(routedEvents(answer)).toEqual([]);
        expect(answer.kept).toHaveLength(1);
        tally.rejectedEvents++;
      }),
      { numRuns: RUNS },
    );
  });

  it('routes exactly the valid events of random JSON and keeps each invalid one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue(),
          webhookBody.map((b) => b.body),
        ),
        async (value) => {
          const raw = JSON.stringify(value);
          // Judged as the ingress sees it: after the JSON round trip (-0 becomes 0, undefined goes).
          expectJudged(await signed(raw), JSON.parse(raw));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('routes every valid body, single or batch, once under the delivery id', async () => {
    await fc.assert(
      fc.asyncProperty(webhookBody, async ({ body, events }) => {
        const id = `evt_${randomUUID()}`;
        const answer = await signed(JSON.stringify(body), id);
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({ received: events.length, rejected: [] });
        if (answer.routed.length === 0) tally.lost++;
        if (answer.routed.length > 1) tally.duplicates++;
        expect(answer.routed).toEqual([{ events, deliveryId: id }]);
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps an event with one rule broken (alone or inside a batch) and routes the others', async () => {
    await fc.assert(
      fc.asyncProperty(
        statusEvent,
        eventMutation,
        fc.boolean(),
        fc.array(statusEvent, { maxLength: 5 }),
        async (event, [, mutate], inBatch, others) => {
          const broken = mutate({ ...event });
          const body = inBatch ? { type: BATCH_EVENT_TYPE, events: [...others, broken] } : broken;
          const id = `evt_${randomUUID()}`;
          const raw = JSON.stringify(body);
          const answer = await signed(raw, id);
          expectJudged(answer, JSON.parse(raw), id);
          expect((answer.body as Accepted).rejected).toHaveLength(1);
          expect(routedEvents(answer)).toEqual(inBatch ? others : []);
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

  it('records the final state of valid events and tells a waiting workflow; keeps broken ones aside', async () => {
    await fc.assert(
      fc.asyncProperty(
        statusEvent,
        fc.option(eventMutation, { nil: undefined }),
        fc.boolean(),
        async (generated, mutation, waiterFirst) => {
          const event = { ...generated, provider_message_id: `prop-${randomUUID()}` };
          const body = mutation ? mutation[1]({ ...event }) : event;
          const raw = JSON.stringify(body);
          // A waiter registered before the event hears it by signal; one registered after finds it stored.
          const early = !mutation && waiterFirst ? await stack.msgflow.awaitMessage(event.provider_message_id) : null;
          const response = await fetch(stack.ingress.webhookUrl, {
            method: 'POST',
            headers: {
              ...signWebhook([stack.webhookSecret], `evt_${randomUUID()}`, Math.floor(Date.now() / 1000), raw),
              'content-type': 'application/json',
            },
            body: raw,
          });
          tally.cases++;
          expect(response.status).toBe(200);
          const answer = (await response.json()) as Accepted;
          if (mutation) {
            expect(answer).toMatchObject({ received: 0, rejected: [{ index: 0 }] });
            tally.rejectedEvents++;
            expect(await stack.store.message(event.provider_message_id)).toBeNull();
            const [newest] = (await stack.store.rejected({ limit: 1 })).rows;
            if (!newest || JSON.stringify(newest.event) !== raw) tally.unkept++;
            expect(newest?.event).toEqual(body);
          } else {
            expect(answer).toEqual({ received: 1, rejected: [] });
            const stored = await stack.store.message(event.provider_message_id);
            if (!stored?.final) tally.lost++;
            expect(stored?.final).toMatchObject({ status: event.status, timestamp: event.timestamp });
            const waiter = early ?? (await stack.msgflow.awaitMessage(event.provider_message_id));
            const outcome = await waiter.result();
            if (outcome.status !== event.status) tally.lost++;
            expect(outcome).toMatchObject({ status: event.status, source: 'webhook' });
          }
        },
      ),
      { numRuns: Math.min(RUNS, 40) },
    );
  });
});
