/** The payload codec (round trip, rotation, tampering) and the codec endpoint over real HTTP (auth, CORS, bad input). */
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCodecServer, startCodecServer } from '../../src/codec-server/server.js';
import { generateCodecToken } from '../../src/cli/codec.js';
import { ConfigError } from '../../src/config.js';
import { decrypt, generateKey, parseKeyRing } from '../../src/crypto/keyring.js';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  KEY_ID_METADATA,
  PayloadDecryptionError,
} from '../../src/temporal/codec.js';
import { dataConverterFromEnv, keyRingOf } from '../../src/temporal/data-converter.js';

const SECRET = { recipients: ['+12025550100'], message: 'Your code is 123456' };
const toPayload = (value: unknown) => defaultPayloadConverter.toPayload(value);
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

describe('EncryptionCodec', () => {
  const ring = parseKeyRing(`k1:${generateKey()}`);
  const codec = new EncryptionCodec(ring);

  it('seals each payload whole (metadata included) and opens it again', async () => {
    const [sealed] = await codec.encode([toPayload(SECRET)]);
    expect(text(sealed!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(sealed!.metadata![KEY_ID_METADATA])).toBe('k1');
    expect(Object.keys(sealed!.metadata!).sort()).toEqual([KEY_ID_METADATA, 'encoding'].sort());
    expect(text(sealed!.data)).not.toContain('2025550100');
    expect(text(sealed!.data)).not.toContain('json/plain');
    const [opened] = await codec.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual(SECRET);
  });

  it('reads payloads sealed with a previous key after rotation, and plain ones from before any key', async () => {
    const oldKey = generateKey();
    const [sealedBefore] = await new EncryptionCodec(parseKeyRing(`old:${oldKey}`)).encode([toPayload('before')]);
    const rotated = new EncryptionCodec(parseKeyRing(`new:${generateKey()},old:${oldKey}`));
    const [sealedAfter] = await rotated.encode([toPayload('after')]);
    expect(text(sealedAfter!.metadata![KEY_ID_METADATA])).toBe('new');
    const opened = await rotated.decode([sealedBefore!, sealedAfter!, toPayload('plain')]);
    expect(opened.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual(['before', 'after', 'plain']);
  });

  it('refuses altered data and unknown keys with a clear error', async () => {
    const [sealed] = await codec.encode([toPayload(SECRET)]);
    const altered = Buffer.from(sealed!.data!);
    altered[altered.length - 1]! ^= 1;
    await expect(codec.decode([{ ...sealed!, data: altered }])).rejects.toThrow(/authentication failed/);
    const stranger = new EncryptionCodec(parseKeyRing(`other:${generateKey()}`));
    await expect(stranger.decode([sealed!])).rejects.toThrow(PayloadDecryptionError);
    await expect(stranger.decode([sealed!])).rejects.toThrow(/no key "k1"/);
  });

  it("keeps its wire format: other processes and the UI's codec endpoint read these names and this associated data", async () => {
    const [sealed] = await codec.encode([toPayload(SECRET)]);
    expect(text(sealed!.metadata!.encoding)).toBe('binary/encrypted');
    expect(text(sealed!.metadata!['encryption-key-id'])).toBe('k1');
    const plain = decrypt(ring, { keyId: 'k1', data: Buffer.from(sealed!.data!) }, Buffer.from('msgflow/payload/v1'));
    expect(defaultPayloadConverter.fromPayload(proto.temporal.api.common.v1.Payload.decode(plain))).toEqual(SECRET);
  });

  it('names a payload without its key id, and keeps the cause of a failed decryption', async () => {
    const [sealed] = await codec.encode([toPayload(SECRET)]);
    const keyless = { ...sealed!, metadata: { encoding: sealed!.metadata!.encoding! } };
    const missing = await codec.decode([keyless]).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(missing).toMatchObject({
      name: 'PayloadDecryptionError',
      message: 'an encrypted payload has no encryption-key-id',
    });
    const stranger = new EncryptionCodec(parseKeyRing(`other:${generateKey()}`));
    const failed = await stranger.decode([sealed!]).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(failed?.cause).toBeInstanceOf(Error);
  });

  it('is configured from MSGFLOW_ENCRYPTION_KEY, with bad keys reported by variable name', () => {
    expect(dataConverterFromEnv({}).payloadCodecs).toEqual([]);
    expect(dataConverterFromEnv({ MSGFLOW_ENCRYPTION_KEY: generateKey() }).payloadCodecs?.[0]).toBeInstanceOf(
      EncryptionCodec,
    );
    expect(() => keyRingOf('k1:short')).toThrow(ConfigError);
    expect(() => dataConverterFromEnv({ MSGFLOW_ENCRYPTION_KEY: 'k1:short' })).toThrow(
      /MSGFLOW_ENCRYPTION_KEY: key "k1" must be 32 bytes/,
    );
  });
});

describe('codec endpoint', () => {
  const token = generateCodecToken();
  const previousToken = generateCodecToken();
  const uiOrigin = 'http://localhost:8233';
  const codec = new EncryptionCodec(parseKeyRing(generateKey()));
  let server: RunningCodecServer;
  let sealedJson: { metadata: Record<string, string>; data: string };

  beforeAll(async () => {
    server = await startCodecServer({ codec, tokens: [token, previousToken], allowedOrigins: [uiOrigin] });
    const [sealed] = await codec.encode([toPayload(SECRET)]);
    sealedJson = {
      metadata: Object.fromEntries(
        Object.entries(sealed!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
      ),
      data: Buffer.from(sealed!.data!).toString('base64'),
    };
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const decodedValue = async (response: Response) => {
    const { payloads } = (await response.json()) as {
      payloads: Array<{ metadata: Record<string, string>; data: string }>;
    };
    expect(Buffer.from(payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
    return JSON.parse(Buffer.from(payloads[0]!.data, 'base64').toString('utf8'));
  };

  it('decodes for a bearer of the current or the previous token', async () => {
    for (const t of [token, previousToken]) {
      const response = await post('/decode', { payloads: [sealedJson] }, { authorization: `Bearer ${t}` });
      expect(response.status).toBe(200);
      expect(await decodedValue(response)).toEqual(SECRET);
    }
  });

  it('decodes for the UI, whose endpoint URL carries the token in its path', async () => {
    const response = await fetch(`${server.uiEndpoint}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: uiOrigin },
      body: JSON.stringify({ payloads: [sealedJson] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(await decodedValue(response)).toEqual(SECRET);
  });

  it('refuses callers without a valid token, before reading the body', async () => {
    for (const headers of [{}, { authorization: `Bearer ${token}x` }, { authorization: token }] as Array<
      Record<string, string>
    >) {
      const response = await post('/decode', { payloads: [sealedJson] }, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await response.json()).toMatchObject({ code: 'unauthorized' });
    }
    expect((await post(`/${token}x/decode`, { payloads: [sealedJson] })).status).toBe(401);
    expect((await post(`/nested/${token}/decode`, { payloads: [sealedJson] })).status).toBe(401);
    expect((await post('/decode', 'not json at all')).status).toBe(401);
  });

  it('encodes, so the CLI can start workflows with encrypted input', async () => {
    const plain = toPayload({ hello: 'world' });
    const response = await post(
      '/encode',
      {
        payloads: [
          {
            metadata: { encoding: Buffer.from(plain.metadata!.encoding!).toString('base64') },
            data: Buffer.from(plain.data!).toString('base64'),
          },
        ],
      },
      { authorization: `Bearer ${token}` },
    );
    expect(response.status).toBe(200);
    const { payloads } = (await response.json()) as {
      payloads: Array<{ metadata: Record<string, string>; data: string }>;
    };
    expect(Buffer.from(payloads[0]!.metadata.encoding!, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
    const [opened] = await codec.decode([
      {
        metadata: Object.fromEntries(
          Object.entries(payloads[0]!.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
        ),
        data: Buffer.from(payloads[0]!.data, 'base64'),
      },
    ]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ hello: 'world' });
  });

  it('answers CORS preflights for the UI origin only', async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace',
        },
      });
    const allowed = await preflight(uiOrigin);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/i);
    expect(allowed.headers.get('access-control-allow-methods')).toMatch(/POST/);
    const foreign = await preflight('http://evil.example');
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    // A foreign page is refused even with a valid token.
    const response = await post(
      '/decode',
      { payloads: [sealedJson] },
      { authorization: `Bearer ${token}`, origin: 'http://evil.example' },
    );
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: 'origin_not_allowed' });
  });

  it('answers bad input with 4xx JSON errors', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const invalidJson = await post('/decode', '{"payloads": [', auth);
    expect(invalidJson.status).toBe(400);
    expect(await invalidJson.json()).toMatchObject({ code: 'invalid_json' });

    const wrongShape = await post('/decode', { payloads: [{ data: 'not base64!' }] }, auth);
    expect(wrongShape.status).toBe(422);
    expect(await wrongShape.json()).toMatchObject({
      code: 'validation_failed',
      details: [{ path: 'payloads.0.data' }],
    });
    expect((await post('/decode', { nothing: true }, auth)).status).toBe(422);

    const foreignKey = await post(
      '/decode',
      { payloads: [{ ...sealedJson, data: Buffer.from('x'.repeat(40)).toString('base64') }] },
      auth,
    );
    expect(foreignKey.status).toBe(422);
    expect(await foreignKey.json()).toMatchObject({ code: 'decode_failed' });

    const unknownPath = await post('/unknown', {}, auth);
    expect(unknownPath.status).toBe(404);
    expect(await unknownPath.json()).toMatchObject({ code: 'not_found' });
    expect((await fetch(`${server.url}/decode`, { method: 'PUT', headers: auth })).status).toBe(405);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
  });
});
