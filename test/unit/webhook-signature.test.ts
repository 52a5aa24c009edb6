/**
 * Webhook signatures as the provider signs them and the ingress checks them: every header required, the
 * timestamp digits only, any of the offered `v1` signatures against any accepted secret (rotation), over
 * the exact bytes of the body.
 */
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  SIGNATURE_HEADERS,
  signWebhook,
  verifyWebhook,
  webhookKey,
} from '../../src/api/signature.js';

const NOW = 1_800_000_000;
const body = '{"event":"message.delivered"}';
const current = generateWebhookSecret();
const previous = generateWebhookSecret();
const verify = (headers: Record<string, string | string[] | undefined>, raw: string | Buffer = body) =>
  verifyWebhook(headers, raw, { secrets: [current], nowSeconds: NOW });

describe('webhook signatures', () => {
  it('makes the three headers, one v1 signature per secret', () => {
    const headers = signWebhook([current, previous], 'evt_1', NOW, body);
    expect(headers[SIGNATURE_HEADERS.id]).toBe('evt_1');
    expect(headers[SIGNATURE_HEADERS.timestamp]).toBe(String(NOW));
    expect(headers[SIGNATURE_HEADERS.signature]).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    expect(generateWebhookSecret()).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  });

  it("accepts a secret's key made once as it accepts the secret, and only that secret's", () => {
    const headers = signWebhook([current], 'evt_1', NOW, body);
    const withKeys = (secrets: ReturnType<typeof webhookKey>[]) =>
      verifyWebhook(headers, body, { secrets, nowSeconds: NOW });
    expect(withKeys([webhookKey(current)])).toEqual({ ok: true, id: 'evt_1' });
    expect(withKeys([webhookKey(previous)])).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('accepts its own signature over the same bytes, given as a string or a Buffer', () => {
    const headers = signWebhook([current], 'evt_1', NOW, body);
    expect(verify(headers)).toEqual({ ok: true, id: 'evt_1' });
    expect(verify(headers, Buffer.from(body))).toEqual({ ok: true, id: 'evt_1' });
    expect(verify(signWebhook([current], 'evt_2', NOW, Buffer.from(body)))).toEqual({ ok: true, id: 'evt_2' });
  });

  it('needs every header; of repeated headers it reads the first', () => {
    const headers = signWebhook([current], 'evt_1', NOW, body);
    for (const name of Object.values(SIGNATURE_HEADERS)) {
      expect(verify({ ...headers, [name]: undefined }), name).toEqual({ ok: false, reason: 'missing_headers' });
      expect(verify({ ...headers, [name]: '' }), name).toEqual({ ok: false, reason: 'missing_headers' });
    }
    const repeated = { ...headers, [SIGNATURE_HEADERS.signature]: [headers[SIGNATURE_HEADERS.signature]!, 'v1,AAAA'] };
    expect(verify(repeated)).toEqual({ ok: true, id: 'evt_1' });
  });

  it('refuses a timestamp that is not whole seconds', () => {
    for (const timestamp of [`${NOW}.5`, `-${NOW}`, `${NOW}s`, ' 1']) {
      const headers = signWebhook([current], 'evt_1', NOW, body);
      expect(verify({ ...headers, [SIGNATURE_HEADERS.timestamp]: timestamp }), timestamp).toEqual({
        ok: false,
        reason: 'stale_timestamp',
      });
    }
  });

  it('refuses another body, id, timestamp or secret', () => {
    const headers = signWebhook([current], 'evt_1', NOW, body);
    const bad = { ok: false, reason: 'bad_signature' };
    expect(verify(headers, `${body} `)).toEqual(bad);
    expect(verify({ ...headers, [SIGNATURE_HEADERS.id]: 'evt_2' })).toEqual(bad);
    expect(verify({ ...headers, [SIGNATURE_HEADERS.timestamp]: String(NOW - 1) })).toEqual(bad);
    expect(verify(signWebhook([previous], 'evt_1', NOW, body))).toEqual(bad);
  });

  it('accepts any offered v1 signature that matches any accepted secret, and only v1', () => {
    const byPrevious = signWebhook([previous], 'evt_1', NOW, body);
    const rotating = { secrets: [current, previous], nowSeconds: NOW };
    expect(verifyWebhook(byPrevious, body, rotating)).toEqual({ ok: true, id: 'evt_1' });
    const mine = signWebhook([current], 'evt_1', NOW, body)[SIGNATURE_HEADERS.signature]!;
    const offered = (signature: string) => ({ ...byPrevious, [SIGNATURE_HEADERS.signature]: signature });
    expect(verify(offered(`v1,AAAA ${mine}`))).toEqual({ ok: true, id: 'evt_1' });
    expect(verify(offered(mine.replace('v1,', 'v2,')))).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verify(offered(mine.slice(0, -4)))).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyWebhook(offered(mine), body, { secrets: [], nowSeconds: NOW })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('takes a secret with or without its whsec_ prefix', () => {
    const bare = current.slice('whsec_'.length);
    expect(
      verifyWebhook(signWebhook([bare], 'evt_1', NOW, body), body, { secrets: [current], nowSeconds: NOW }),
    ).toEqual({ ok: true, id: 'evt_1' });
  });
});
