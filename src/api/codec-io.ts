/**
 * The codec endpoint's contract (Temporal's remote codec protocol): `POST …/encode` and `POST …/decode`
 * take and return `{ payloads: [...] }`, each payload in proto3 JSON (bytes as base64). The Temporal UI and
 * CLI speak it; so can any tool that needs msgflow's payloads in clear.
 */
import { z } from 'zod';

/** Standard or URL-safe base64, as proto3 JSON allows for bytes. */
const Base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'expected base64');

export const JsonPayload = z.looseObject({
  metadata: z.record(z.string(), Base64).optional(),
  data: Base64.optional(),
});
export type JsonPayload = z.infer<typeof JsonPayload>;

export const CodecRequest = z.looseObject({
  payloads: z.array(JsonPayload).max(10_000),
});
export type CodecRequest = z.infer<typeof CodecRequest>;

export const CodecResponse = z.object({ payloads: z.array(JsonPayload) });
export type CodecResponse = z.infer<typeof CodecResponse>;
