/**
 * fast-check arbitraries for the contract's inputs: valid values built from the rules in src/api, and
 * mutations that each break exactly one rule (so the expected verdict is known without asking the schema).
 */
import fc from 'fast-check';
import { formatTimestamp } from '../../../src/api/common.js';
import { BATCH_EVENT_TYPE, type FinalStatus, type MessageStatusEvent } from '../../../src/api/events.js';
import { FINAL_STATUSES } from '../../../src/api/constants.js';
import { MAGIC_NUMBERS } from '../../../src/sandbox/index.js';

/** Numbers libphonenumber accepts (the sandbox's magic ones and a few real-format ones). */
export const VALID_NUMBERS = [
  ...Object.values(MAGIC_NUMBERS),
  '2348012345678',
  '447911123456',
  '14155552671',
  '4915112345678',
];

export const finalStatus = fc.constantFrom(...FINAL_STATUSES);
export const providerMessageId = fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/);
export const plusNumber = fc.stringMatching(/^\+[1-9]\d{6,14}$/);
export const timestamp = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
  .map(formatTimestamp);

export const statusEvent: fc.Arbitrary<MessageStatusEvent> = fc
  .record({ status: finalStatus, provider_message_id: providerMessageId, mobile_number: plusNumber, timestamp })
  .map(({ status, ...rest }) => ({ event: `message.${status}` as const, status, ...rest }));

/** A valid webhook body, single or batch, sometimes with extra fields a newer provider might add. */
export const webhookBody: fc.Arbitrary<{ body: Record<string, unknown>; events: MessageStatusEvent[] }> = fc.oneof(
  statusEvent.map((event) => ({ body: { ...event }, events: [event] })),
  fc
    .array(statusEvent, { minLength: 1, maxLength: 20 })
    .map((events) => ({ body: { type: BATCH_EVENT_TYPE, events }, events })),
  fc
    .tuple(statusEvent, fc.dictionary(fc.stringMatching(/^x_[a-z]{1,8}$/), fc.jsonValue()))
    .map(([event, extra]) => ({ body: { ...extra, ...event }, events: [event] })),
);

type Mutation = (event: Record<string, unknown>) => Record<string, unknown>;

const without =
  (key: string): Mutation =>
  (e) =>
    Object.fromEntries(Object.entries(e).filter(([k]) => k !== key));
const otherFinal = (status: unknown): FinalStatus => FINAL_STATUSES.find((s) => s !== status)!;

/** Each mutation breaks one rule of MessageStatusEvent, so the result must be refused. */
export const eventMutation: fc.Arbitrary<[string, Mutation]> = fc.oneof(
  fc
    .constantFrom('event', 'mobile_number', 'provider_message_id', 'status', 'timestamp')
    .map((key): [string, Mutation] => [`without ${key}`, without(key)]),
  fc.constant<[string, Mutation]>([
    'status differs from the event kind',
    (e) => ({ ...e, status: otherFinal(e.status) }),
  ]),
  fc
    .constantFrom('queued', 'sent', 'unknown', 'DELIVERED', '')
    .map((s): [string, Mutation] => [`status ${JSON.stringify(s)}`, (e) => ({ ...e, status: s })]),
  fc
    .constantFrom('12025550100', '+0123456', '+1202555010a', '', '+1234567890123456')
    .map((n): [string, Mutation] => [`mobile_number ${JSON.stringify(n)}`, (e) => ({ ...e, mobile_number: n })]),
  fc
    .constantFrom('2026-01-01T00:00:00Z', '2026-01-01T00:00:00', 'yesterday', '2026-13-01T00:00:00+00:00', '')
    .map((t): [string, Mutation] => [`timestamp ${JSON.stringify(t)}`, (e) => ({ ...e, timestamp: t })]),
  fc
    .constantFrom('', 'x'.repeat(201))
    .map((id): [string, Mutation] => [
      `provider_message_id of length ${id.length}`,
      (e) => ({ ...e, provider_message_id: id }),
    ]),
  fc
    .constantFrom('event', 'mobile_number', 'provider_message_id', 'status', 'timestamp')
    .chain((key) =>
      fc
        .oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }))
        .map((v): [string, Mutation] => [
          `${key} of type ${v === null ? 'null' : typeof v}`,
          (e) => ({ ...e, [key]: v }),
        ]),
    ),
);
