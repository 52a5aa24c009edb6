/** parseWebhookEvents: a body is a batch only when it names itself one; every event is judged on its own. */
import { describe, expect, it } from 'vitest';
import { MAX_EVENTS_PER_BATCH } from '../../src/api/constants.js';
import { BATCH_EVENT_TYPE, BATCH_TOO_LARGE_REASON, parseWebhookEvents } from '../../src/api/events.js';

const event = (id: string) => ({
  event: 'message.delivered',
  mobile_number: '+2348012345678',
  provider_message_id: id,
  status: 'delivered',
  timestamp: '2026-11-26T10:00:00+01:00',
});

describe('parseWebhookEvents', () => {
  it('reads a single-event body as one event', () => {
    expect(parseWebhookEvents(event('m1'))).toEqual({ events: [event('m1')], rejected: [] });
  });

  it('reads each event of a batch, keeping a malformed one by its index', () => {
    const { events, rejected } = parseWebhookEvents({
      type: BATCH_EVENT_TYPE,
      events: [event('m1'), { ...event('m2'), status: 'sent' }, event('m3')],
    });
    expect(events.map((e) => e.provider_message_id)).toEqual(['m1', 'm3']);
    expect(rejected.map((r) => r.index)).toEqual([1]);
  });

  it('rejects a body that names itself a batch without a list of events as one event', () => {
    const body = { type: BATCH_EVENT_TYPE, events: 'm1' };
    expect(parseWebhookEvents(body)).toMatchObject({ events: [], rejected: [{ index: 0, event: body }] });
  });

  it('rejects an event list under another type as one event, never reading it as a batch', () => {
    const body = { type: 'message.status.other', events: [event('m1')] };
    expect(parseWebhookEvents(body)).toMatchObject({ events: [], rejected: [{ index: 0, event: body }] });
  });

  it('rejects a body that is not an object', () => {
    for (const body of [null, 'text', 42, [event('m1')]])
      expect(parseWebhookEvents(body)).toMatchObject({ events: [], rejected: [{ index: 0, event: body }] });
  });

  it('rejects the events of a batch past the documented limit as batch_too_large, keeping them', () => {
    const batch = Array.from({ length: MAX_EVENTS_PER_BATCH + 2 }, (_, i) => event(`m${i}`));
    const { events, rejected } = parseWebhookEvents({ type: BATCH_EVENT_TYPE, events: batch });
    expect(events).toHaveLength(MAX_EVENTS_PER_BATCH);
    expect(rejected).toEqual([
      { index: MAX_EVENTS_PER_BATCH, reason: BATCH_TOO_LARGE_REASON, event: batch[MAX_EVENTS_PER_BATCH] },
      { index: MAX_EVENTS_PER_BATCH + 1, reason: BATCH_TOO_LARGE_REASON, event: batch[MAX_EVENTS_PER_BATCH + 1] },
    ]);
    expect(BATCH_TOO_LARGE_REASON).toMatch(/^batch_too_large/);
  });
});
