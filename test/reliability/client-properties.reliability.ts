/**
 * Property-based tests of the client's input handling (fast-check) against the real sandbox. For
 * arbitrary input to each method — valid, almost valid, or anything at all — exactly one of:
 * - InvalidInputError naming fields, and no request went out;
 * - a request went out whose body the contract accepts, and the sandbox did not find it invalid either
 *   (no 422 validation_failed: client and provider agree), and never answered 5xx.
 * Anything else (a TypeError, a request for invalid input) is a failure. fetch is the real one, wrapped
 * to count and record the requests.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { EmailVerifyRequest, LookupRequest } from '../../src/api/checks.js';
import { MessageStatus } from '../../src/api/events.js';
import { OtpSendRequest, OtpVerifyRequest } from '../../src/api/otp.js';
import { SmsSendRequest } from '../../src/api/sms.js';
import { VoiceSendRequest } from '../../src/api/voice.js';
import { WebhookCreateRequest, WebhookUpdateRequest } from '../../src/api/webhooks.js';
import { InvalidInputError, MessagingApiError, MessagingClient } from '../../src/client/index.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { VALID_NUMBERS } from './support/arbitraries.js';
import { printSummary } from './support/summary.js';

const RUNS = Number(process.env.MSGFLOW_PROPERTY_RUNS ?? 300);
const tally = {
  cases: 0,
  refusedLocally: 0,
  sent: 0,
  providerRefused: 0,
  server5xx: 0,
  disagreements: 0,
  requestsForInvalidInput: 0,
};

interface Recorded {
  method: string;
  url: string;
  body: unknown;
}

/** A client whose fetch is the platform's, recording what goes on the wire. */
function recordingClient(baseUrl: string, token: string): { client: MessagingClient; requests: Recorded[] } {
  const requests: Recorded[] = [];
  const client = new MessagingClient({
    baseUrl,
    token,
    maxRetries: 0,
    strictResponses: true,
    fetch: async (input, init) => {
      const text = typeof init?.body === 'string' ? init.body : undefined;
      requests.push({
        method: init?.method ?? 'GET',
        url: String(input),
        body: text === undefined ? undefined : JSON.parse(text),
      });
      return fetch(input, init);
    },
  });
  return { client, requests };
}

// Field generators that are often right and often wrong in every way a caller can be wrong.
const anyValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 20 }),
  fc.array(fc.string(), { maxLength: 2 }),
);
const number = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...VALID_NUMBERS) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', '+12025550100', '012025550100', '1202555010a', '1234', '99999999999999999'),
  },
  { weight: 1, arbitrary: fc.stringMatching(/^\d{1,16}$/) },
  { weight: 1, arbitrary: anyValue },
);
const text = (max: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 60 }) },
    fc.constant(''),
    fc.string({ minLength: max - 5, maxLength: max + 5 }),
    anyValue,
  );
const sender = fc.oneof(
  { weight: 3, arbitrary: fc.constant('ACME') },
  fc.stringMatching(/^[A-Za-z0-9 ]{0,13}$/),
  fc.stringMatching(/^\d{1,16}$/),
  anyValue,
);
const int = (min: number, max: number) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min, max }) },
    fc.integer({ min: min - 50, max: max + 50 }),
    fc.double(),
    anyValue,
  );
/** Sometimes the fields, sometimes an extra one (strict objects refuse it), sometimes not an object at all. */
function bodyOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const record = fc
    .record(fields, { requiredKeys: [] })
    .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
  return fc.oneof(
    { weight: 6, arbitrary: record },
    { weight: 1, arbitrary: record.map((r) => ({ ...r, unexpected: true })) },
    { weight: 1, arbitrary: fc.anything() },
  );
}

describe('client input under arbitrary values', () => {
  let t: TestSandbox;
  let client: MessagingClient;
  let requests: Recorded[];
  let webhookClient: { client: MessagingClient; requests: Recorded[] };

  beforeAll(async () => {
    t = await startTestSandbox();
    const account = await t.newAccount({
      balance: 1_000_000_000,
      ratePerMinute: 1_000_000,
      scopes: ['sms:send', 'otp', 'voice', 'lookup', 'email:verify', 'reports'],
    });
    ({ client, requests } = recordingClient(t.sandbox.baseUrl, account.token));
    // Webhooks live on an account that never sends, so no generated URL is ever delivered to.
    const hooks = await t.newAccount({ scopes: ['webhooks'], ratePerMinute: 1_000_000 });
    webhookClient = recordingClient(t.sandbox.baseUrl, hooks.token);
  });
  afterAll(async () => {
    await t?.close();
    printSummary('client properties', tally, `${RUNS} runs per method`);
  });

  /**
   * The property itself: `call(input)` either throws InvalidInputError before any request (and the
   * contract schema agrees the input is invalid), or sends a body the schema accepts and gets an answer
   * that is neither a 5xx nor the provider's own validation_failed.
   */
  async function checkCall(
    schema: z.ZodType | undefined,
    input: unknown,
    call: () => Promise<unknown>,
    recorded: Recorded[],
  ): Promise<void> {
    recorded.length = 0;
    tally.cases++;
    let error: unknown;
    try {
      await call();
    } catch (caught) {
      error = caught;
    }
    if (error instanceof InvalidInputError) {
      tally.refusedLocally++;
      if (recorded.length) tally.requestsForInvalidInput++;
      expect(recorded).toEqual([]);
      expect(error.details.length).toBeGreaterThan(0);
      if (schema) expect(schema.safeParse(input).success).toBe(false);
      return;
    }
    expect(recorded).toHaveLength(1);
    tally.sent++;
    if (schema) expect(schema.safeParse(recorded[0]!.body).success, JSON.stringify(recorded[0]!.body)).toBe(true);
    if (error === undefined) return;
    // Only the provider's business answers are acceptable failures: never a crash of the client.
    expect(error, String(error)).toBeInstanceOf(MessagingApiError);
    const { status, code } = error as MessagingApiError;
    tally.providerRefused++;
    if (status >= 500) tally.server5xx++;
    if (code === 'validation_failed') tally.disagreements++;
    expect(status, `${code}`).toBeLessThan(500);
    expect(code, JSON.stringify((error as MessagingApiError).details)).not.toBe('validation_failed');
  }

  const property = <T>(arbitrary: fc.Arbitrary<T>, check: (value: T) => Promise<void>, examples: T[] = []) =>
    fc.assert(fc.asyncProperty(arbitrary, check), { numRuns: RUNS, examples: examples.map((e): [T] => [e]) });

  it('sms.send', () =>
    property(
      bodyOf({ recipients: fc.oneof(fc.array(number, { maxLength: 4 }), anyValue), sender, message: text(1530) }),
      (input) => checkCall(SmsSendRequest, input, () => client.sms.send(input as never), requests),
    ));

  it('otp.send', () =>
    property(
      bodyOf({
        recipient: number,
        sender: fc.option(sender, { nil: undefined }),
        length: int(4, 10),
        expires_in: int(30, 3600),
        template: fc.oneof(
          text(300),
          fc.string({ maxLength: 40 }).map((s) => `${s}{code}`),
        ),
      }),
      (input) => checkCall(OtpSendRequest, input, () => client.otp.send(input as never), requests),
    ));

  it('otp.verify (an unknown otp_id is a 404, not a validation failure)', () =>
    property(
      bodyOf({
        otp_id: fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), anyValue),
        code: fc.oneof(fc.stringMatching(/^\d{3,11}$/), anyValue),
      }),
      (input) => checkCall(OtpVerifyRequest, input, () => client.otp.verify(input as never), requests),
    ));

  it('voice.send', () =>
    property(
      bodyOf({
        recipient: number,
        message: text(1000),
        sender: fc.option(sender, { nil: undefined }),
        language: fc.oneof(fc.constantFrom('en-US', 'fr', 'de-DE'), fc.string({ maxLength: 6 })),
        repeat: int(1, 3),
      }),
      (input) => checkCall(VoiceSendRequest, input, () => client.voice.send(input as never), requests),
    ));

  it('lookups.create', () =>
    property(bodyOf({ number: fc.oneof(number, fc.string({ maxLength: 40 })) }), (input) =>
      checkCall(LookupRequest, input, () => client.lookups.create(input as never), requests),
    ));

  it('email.verify', () =>
    property(bodyOf({ email: fc.oneof(fc.emailAddress(), fc.string({ maxLength: 40 }), anyValue) }), (input) =>
      checkCall(EmailVerifyRequest, input, () => client.email.verify(input as never), requests),
    ));

  it('messages.list and campaigns.list parameters', () =>
    property(
      fc.record(
        {
          status: fc.oneof(fc.constantFrom(...MessageStatus.options), fc.string({ maxLength: 10 }), anyValue),
          perPage: int(1, 200),
          cursor: fc.oneof(fc.string({ maxLength: 20 }), anyValue),
        },
        { requiredKeys: [] },
      ),
      async (params) => {
        for (const list of [client.messages, client.campaigns]) {
          // list() validates synchronously; firstPage() makes the one request.
          await checkCall(undefined, params, async () => list.list(params as never).firstPage(), requests);
        }
      },
      // Found by this property: coerced to 1 by the schema, yet sent as per_page=true (fixed in the client).
      [{ perPage: true }],
    ));

  it('webhooks.create and webhooks.update', () =>
    property(
      fc.tuple(
        bodyOf({
          url: fc.oneof(fc.webUrl(), fc.string({ maxLength: 30 }), fc.constant('ftp://example.test/x')),
          events: fc.oneof(
            fc.constant(['*']),
            fc.array(fc.constantFrom('message.delivered', 'message.failed', 'message.sent', '*'), { maxLength: 3 }),
            anyValue,
          ),
          batch: fc.oneof(fc.boolean(), anyValue),
        }),
        bodyOf({ url: fc.oneof(fc.webUrl(), fc.string({ maxLength: 30 })), batch: fc.oneof(fc.boolean(), anyValue) }),
      ),
      async ([create, update]) => {
        const { client: hooks, requests: recorded } = webhookClient;
        let id: string | undefined;
        await checkCall(
          WebhookCreateRequest,
          create,
          async () => ({ id } = await hooks.webhooks.create(create as never)),
          recorded,
        );
        if (!id) return;
        await checkCall(WebhookUpdateRequest, update, () => hooks.webhooks.update(id!, update as never), recorded);
        await hooks.webhooks.delete(id);
      },
    ));
});
