/**
 * A signed delivery's timestamp must be within the tolerance of now on either side: a stale one could be a
 * replay, and one from the future would stay replayable for that much longer. Checked at the boundary, for
 * the signature check itself and for the ingress's verifier (which reads the clock).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_TOLERANCE_SECONDS,
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
} from '../../src/api/signature.js';
import { standardWebhooksVerifier } from '../../src/ingress/verifier.js';

const NOW_SECONDS = 1_800_000_000;
const TOLERANCE = DEFAULT_TOLERANCE_SECONDS;
const body = JSON.stringify({ event: 'message.delivered', provider_message_id: 'msg_1' });
const secret = generateWebhookSecret();

/** The headers of `body` signed `offsetSeconds` from now (negative: in the past). */
const signedAt = (offsetSeconds: number) => signWebhook([secret], 'evt_1', NOW_SECONDS + offsetSeconds, body);

const accepted = { ok: true, id: 'evt_1' };
const stale = { ok: false, reason: 'stale_timestamp' };

const cases = [
  { when: 'in the past, at the tolerance', offset: -TOLERANCE, expected: accepted },
  { when: 'in the past, one second past the tolerance', offset: -TOLERANCE - 1, expected: stale },
  { when: 'in the future, at the tolerance', offset: TOLERANCE, expected: accepted },
  { when: 'in the future, one second past the tolerance', offset: TOLERANCE + 1, expected: stale },
  { when: 'ten minutes in the future', offset: 600, expected: stale },
];

describe('webhook timestamp tolerance', () => {
  it.each(cases)('verifyWebhook: a timestamp $when', ({ offset, expected }) => {
    expect(verifyWebhook(signedAt(offset), body, { secrets: [secret], nowSeconds: NOW_SECONDS })).toEqual(expected);
  });

  it('verifyWebhook: a custom tolerance bounds both sides', () => {
    const verify = (offset: number) =>
      verifyWebhook(signedAt(offset), body, { secrets: [secret], nowSeconds: NOW_SECONDS, toleranceSeconds: 30 });
    expect([verify(-30), verify(30), verify(-31), verify(31)]).toEqual([accepted, accepted, stale, stale]);
  });

  describe("the ingress's verifier, on its clock", () => {
    beforeEach(() => {
      // Only Date is faked: the verifier reads the time, nothing here waits.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(NOW_SECONDS * 1000);
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it.each(cases)('a timestamp $when', ({ offset, expected }) => {
      const verifier = standardWebhooksVerifier([secret]);
      expect(verifier.verify(signedAt(offset), Buffer.from(body))).toEqual(expected);
    });
  });
});

describe('the ingress verifier', () => {
  it('refuses to be built without a signing secret', () => {
    expect(() => standardWebhooksVerifier([])).toThrow('at least one webhook signing secret is required');
  });
});
